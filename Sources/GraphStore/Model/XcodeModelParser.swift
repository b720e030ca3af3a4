import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Turns the XML of an Xcode model's `contents` file into entity declarations.
///
/// One instance reads one document and is then thrown away; `parse(_:)` creates it, so nothing is shared between
/// threads. Elements the store has no use for (`elements`, `configuration`, `userInfo`, `fetchRequest`,
/// `fetchedProperty`, ones newer Xcodes may add…) are skipped with everything inside them.
final class XcodeModelParser: NSObject, XMLParserDelegate {
    /// Where the reader is in the document: one frame per open element.
    private enum Frame {
        case model
        case entity
        case attribute
        case relationship
        case fetchIndex
        case fetchIndexElement
        case uniquenessConstraints
        case uniquenessConstraint
        case constraint
        /// An element that is not read, or one inside it.
        case skipped
    }

    private var stack: [Frame] = []
    private var entities: [EntityDescription] = []
    private var problems: [String] = []
    /// Set once the XML itself is broken or is not a model: later callbacks are then ignored.
    private var stopped = false
    private var sawRoot = false

    private var entity: EntityDescription?
    private var entityLabel = ""
    private var fetchIndex: FetchIndexDescription?
    private var fetchIndexLabel = ""
    private var constraint: [String] = []

    private override init() {}

    /// The entities in file order, or the problems found (an XML error is reported alone).
    static func parse(_ data: Data) -> (entities: [EntityDescription], problems: [String]) {
        let reader = XcodeModelParser()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        _ = parser.parse()
        // The parser does not always report through the delegate (nor fail `parse()`) when the XML is broken.
        if !reader.stopped, let error = parser.parserError {
            reader.fail(xmlError: error, line: parser.lineNumber)
        }
        if !reader.stopped && !reader.sawRoot {
            reader.problems = ["is not XML (line \(parser.lineNumber): there is no root element)"]
        }
        return (reader.entities, reader.problems)
    }

    // MARK: XMLParserDelegate

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes: [String: String] = [:]
    ) {
        guard !stopped else { return }
        guard let parent = stack.last else {
            sawRoot = true
            guard elementName == "model" else {
                problems = ["is not a Core Data model (the root element is '\(elementName)', expected 'model')"]
                stopped = true
                parser.abortParsing()
                return
            }
            stack.append(.model)
            return
        }
        let frame = Self.frame(for: elementName, inside: parent)
        stack.append(frame)
        let fields = Fields(values: attributes)
        switch frame {
        case .entity: startEntity(fields, line: parser.lineNumber)
        case .attribute: readAttribute(fields, line: parser.lineNumber)
        case .relationship: readRelationship(fields, line: parser.lineNumber)
        case .fetchIndex: startFetchIndex(fields, line: parser.lineNumber)
        case .fetchIndexElement: readFetchIndexElement(fields)
        case .uniquenessConstraint: constraint = []
        case .constraint: readConstraint(fields)
        case .model, .uniquenessConstraints, .skipped: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        guard !stopped, let frame = stack.popLast() else { return }
        switch frame {
        case .entity:
            if let entity { entities.append(entity) }
            entity = nil
        case .fetchIndex:
            if let fetchIndex { entity?.fetchIndexes.append(fetchIndex) }
            fetchIndex = nil
        case .uniquenessConstraint:
            entity?.uniquenessConstraints.append(constraint)
            constraint = []
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard !stopped else { return }
        fail(xmlError: parseError, line: parser.lineNumber)
    }

    private func fail(xmlError: any Error, line: Int) {
        problems = ["is not XML (line \(line): \(Self.reason(for: xmlError)))"]
        stopped = true
    }

    // MARK: Structure

    /// What an element is, given the element it sits in; anything not read is skipped.
    private static func frame(for name: String, inside parent: Frame) -> Frame {
        switch (parent, name) {
        case (.model, "entity"): .entity
        case (.entity, "attribute"): .attribute
        case (.entity, "relationship"): .relationship
        case (.entity, "fetchIndex"): .fetchIndex
        case (.entity, "uniquenessConstraints"): .uniquenessConstraints
        case (.fetchIndex, "fetchIndexElement"): .fetchIndexElement
        case (.uniquenessConstraints, "uniquenessConstraint"): .uniquenessConstraint
        case (.uniquenessConstraint, "constraint"): .constraint
        default: .skipped
        }
    }

    // MARK: Elements

    private func startEntity(_ fields: Fields, line: Int) {
        let name = fields["name"]
        entityLabel = name.map { "entity '\($0)'" } ?? "entity at line \(line)"
        if name == nil { problems.append("\(entityLabel): missing 'name'") }
        entity = EntityDescription(
            name: name ?? "",
            isAbstract: fields.flag("isAbstract", of: entityLabel, problems: &problems),
            parent: fields["parentEntity"])
    }

    private func readAttribute(_ fields: Fields, line: Int) {
        let name = fields["name"]
        let label = "\(entityLabel): " + (name.map { "attribute '\($0)'" } ?? "attribute at line \(line)")
        if name == nil { problems.append("\(label): missing 'name'") }

        var type = AttributeType.string
        if let text = fields["attributeType"] {
            if let known = AttributeType(rawValue: text) {
                type = known
            } else {
                problems.append("\(label): unknown attributeType '\(text)'")
            }
        } else {
            problems.append("\(label): missing 'attributeType'")
        }

        var derivation: String?
        if fields.flag("derived", of: label, problems: &problems) {
            derivation = fields["derivationExpression"]
            if derivation == nil { problems.append("\(label): derived=\"YES\" without a derivationExpression") }
        }

        entity?.attributes.append(AttributeDescription(
            name: name ?? "",
            type: type,
            isOptional: fields.flag("optional", of: label, problems: &problems),
            isTransient: fields.flag("transient", of: label, problems: &problems),
            // Xcode keeps a Date default as seconds since 2001 in its own field.
            defaultValue: fields["defaultValueString"] ?? fields["defaultDateTimeInterval"],
            minValue: fields["minValueString"],
            maxValue: fields["maxValueString"],
            regularExpression: fields["regularExpressionString"],
            derivation: derivation,
            isIndexed: fields.flag("indexed", of: label, problems: &problems)))
    }

    private func readRelationship(_ fields: Fields, line: Int) {
        let name = fields["name"]
        let label = "\(entityLabel): " + (name.map { "relationship '\($0)'" } ?? "relationship at line \(line)")
        if name == nil { problems.append("\(label): missing 'name'") }

        let destination = fields["destinationEntity"]
        if destination == nil { problems.append("\(label): missing 'destinationEntity'") }
        if let destination, let inverseEntity = fields["inverseEntity"], inverseEntity != destination {
            problems.append("\(label): inverseEntity '\(inverseEntity)' differs from destinationEntity '\(destination)'")
        }

        var deleteRule = DeleteRule.nullify
        if let text = fields["deletionRule"] {
            if let known = DeleteRule(rawValue: text) {
                deleteRule = known
            } else {
                problems.append("\(label): unknown deletionRule '\(text)'")
            }
        }

        let isToMany = fields.flag("toMany", of: label, problems: &problems)
        let isOrdered = fields.flag("ordered", of: label, problems: &problems)
        let minCount = fields.count("minCount", of: label, problems: &problems)
        let maxCount = fields.count("maxCount", of: label, problems: &problems)
        entity?.relationships.append(RelationshipDescription(
            name: name ?? "",
            destination: destination ?? "",
            inverse: fields["inverseName"],
            isToMany: isToMany,
            // Xcode may leave `ordered` set after a relationship is switched to to-one; it means nothing there.
            isOrdered: isToMany && isOrdered,
            isOptional: fields.flag("optional", of: label, problems: &problems),
            isTransient: fields.flag("transient", of: label, problems: &problems),
            deleteRule: deleteRule,
            // Xcode writes maxCount="1" on every to-one; the model keeps counts for to-manys only.
            minCount: isToMany ? minCount : 0,
            maxCount: isToMany ? maxCount : 0))
    }

    private func startFetchIndex(_ fields: Fields, line: Int) {
        let name = fields["name"]
        fetchIndexLabel = "\(entityLabel): " + (name.map { "fetch index '\($0)'" } ?? "fetch index at line \(line)")
        if name == nil { problems.append("\(fetchIndexLabel): missing 'name'") }
        fetchIndex = FetchIndexDescription(name: name ?? "", elements: [])
    }

    private func readFetchIndexElement(_ fields: Fields) {
        guard let property = fields["property"] else {
            if fields["expression"] != nil {
                problems.append("\(fetchIndexLabel): expression elements are not supported")
            } else {
                problems.append("\(fetchIndexLabel): an element is missing 'property'")
            }
            return
        }
        var isAscending = true
        switch fields["order"] {
        case nil, "ascending": break
        case "descending": isAscending = false
        case let other?: problems.append("\(fetchIndexLabel): element '\(property)': order '\(other)' is not ascending or descending")
        }
        fetchIndex?.elements.append(
            FetchIndexDescription.Element(property: property, kind: fields["type"] ?? "Binary", isAscending: isAscending))
    }

    private func readConstraint(_ fields: Fields) {
        guard let value = fields["value"] else {
            problems.append("\(entityLabel): a uniqueness constraint element is missing 'value'")
            return
        }
        constraint.append(value)
    }

    // MARK: XML errors

    /// A short reason for a parser error, from its code.
    ///
    /// Foundation's descriptions of these errors give only the number. The codes are libxml2's (Darwin's
    /// `NSXMLParserError` uses the same numbers); they are matched as integers because on Linux the cases of
    /// `XMLParser.ErrorCode` do not carry these raw values.
    private static func reason(for error: any Error) -> String {
        let code = (error as NSError).code
        switch code {
        case 3, 4: return "expected a start tag ('<')"
        case 5: return "the document does not hold exactly one root element"
        case 6, 7, 8, 10: return "a malformed character reference"
        case 9: return "a character not allowed in XML"
        case 22, 23, 26, 27: return "an unknown or malformed '&' entity"
        case 31, 32, 79, 81: return "the text is not in the declared encoding"
        case 33, 34, 43, 44: return "a quoted value is not closed"
        case 38: return "'<' inside an attribute value"
        case 39, 40, 41, 75: return "a malformed attribute"
        case 42: return "an attribute appears twice in one element"
        case 45, 80: return "a malformed comment"
        case 56, 57, 64: return "a malformed or misplaced '<?xml …?>' declaration"
        case 62, 63: return "a malformed CDATA section"
        case 65, 68: return "a malformed tag"
        case 72, 74: return "expected '<'"
        case 73, 77: return "a tag is not closed with '>'"
        case 76: return "a closing tag does not match the open element"
        case 85: return "the elements are not properly nested"
        case 86: return "content after the root element"
        case 89: return "entities that refer to each other in a loop"
        default: return "parser error \(code)"
        }
    }
}

/// The XML attributes of one element, with readers for Xcode's spellings.
private struct Fields {
    var values: [String: String]

    subscript(key: String) -> String? { values[key] }

    /// A `YES`/`NO` flag (also `true`/`false`); absent means NO.
    func flag(_ key: String, of label: String, problems: inout [String]) -> Bool {
        switch values[key] {
        case nil, "NO", "false": return false
        case "YES", "true": return true
        case let other?:
            problems.append("\(label): '\(key)' must be YES or NO, not '\(other)'")
            return false
        }
    }

    /// A count such as `minCount`; absent means 0.
    func count(_ key: String, of label: String, problems: inout [String]) -> Int {
        guard let text = values[key] else { return 0 }
        guard let number = Int(text), number >= 0 else {
            problems.append("\(label): '\(key)' must be a non-negative integer, not '\(text)'")
            return 0
        }
        return number
    }
}
