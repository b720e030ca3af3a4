import Foundation
import Testing

@Suite struct ModelCommandTests {
    @Test func helpAndVersion() throws {
        let help = try FaultlineBinary.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: faultline <subcommand>"))
        #expect(help.stdout.contains("model"))
        let version = try FaultlineBinary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == "faultline 0.1.0\n")
    }

    @Test func printsEntitiesRelationshipsAndWarnings() throws {
        let result = try FaultlineBinary.run(["model", testModels.appendingPathComponent("Students.xcdatamodel").path])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasSuffix("Students.xcdatamodel: 4 entities, 2 warnings"))
        #expect(lines.contains("Student  (Z_ENT 3, table ZSTUDENT)"))
        #expect(lines.contains { $0.contains("subjects") && $0.contains("many-to-many, Nullify, optional, inverse students") && $0.contains("Z_3SUBJECTS (Z_3STUDENTS → Z_4SUBJECTS)") })
        #expect(lines.contains { $0.contains("address") && $0.contains("one-to-one, Cascade") && $0.hasSuffix("ZSTUDENT.ZADDRESS") })
        #expect(lines.contains { $0.contains("class") && $0.contains("many-to-one") })
        #expect(lines.contains("warnings:"))
        #expect(lines.contains("  Student.mailingAddress: has no inverse (one-to-nil); deletes and edits on 'Address' will not update it"))
    }

    @Test func ddlRunsInSQLite3AndMatchesTheLibrary() throws {
        let model = testModels.appendingPathComponent("Contacts.xcdatamodeld").path
        let result = try FaultlineBinary.run(["model", model, "--ddl"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("CREATE TABLE ZCONTACT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,"))
        #expect(result.stdout.contains("CREATE TRIGGER Z_DA_Z_2MEMBERS_Group_membersCount_PARAMETER_INSERT AFTER INSERT"))
        #expect(result.stdout.hasSuffix("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);\n"))
        let folder = TemporaryFolder()
        let script = folder.path("schema.sql")
        try result.stdout.write(toFile: script, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-bail", folder.path("made.sqlite"), ".read \(script)"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func jsonDescribesTheModel() throws {
        let result = try FaultlineBinary.run(["model", testModels.appendingPathComponent("Employees.xcdatamodel").path, "--json"])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let entities = object["entities"] as! [[String: Any]]
        #expect(entities.map { $0["name"] as! String } == ["Employee"])
        let relationships = entities[0]["relationships"] as! [[String: Any]]
        let peers = relationships.first { $0["name"] as! String == "peers" }!
        #expect(peers["cardinality"] as? String == "many-to-many")
        #expect(peers["storage"] as? String == "Z_1PEERS (Z_1PEERS → REFLEXIVE)")
        let reports = relationships.first { $0["name"] as! String == "reports" }!
        #expect(reports["deleteRule"] as? String == "Deny")
        #expect((object["warnings"] as! [String]).isEmpty)
    }

    @Test func badModelFilesGetOneErrorLine() throws {
        let folder = TemporaryFolder()
        let notXML = folder.path("notes.txt")
        try "just some text\n".write(toFile: notXML, atomically: true, encoding: .utf8)
        let empty = folder.path("empty")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let badInverse = folder.path("bad.xml")
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="A"><relationship name="b" maxCount="1" destinationEntity="B" inverseName="nope" inverseEntity="B"/></entity>
                <entity name="B"><attribute name="x" attributeType="String"/></entity>
            </model>
            """.write(toFile: badInverse, atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            (folder.path("missing.xcdatamodel"), "no such file or directory"),
            // A file, not a model's 'contents': named as what it is not, rather than as XML gone wrong.
            (notXML, "is neither a model file nor an SQLite store"),
            (empty, "is empty"),
            (badInverse, "entity 'A': relationship 'b': unknown inverse 'nope' on entity 'B'"),
        ]
        for (path, phrase) in cases {
            let before = FileManager.default.contents(atPath: path)
            let result = try FaultlineBinary.run(["model", path])
            #expect(result.status == 1, "\(path)")
            #expect(result.stdout == "")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("error: \(path): "), "\(result.stderr)")
            #expect(result.stderr.contains(phrase), "\(result.stderr)")
            #expect(FileManager.default.contents(atPath: path) == before)
        }
    }

    @Test func usageErrorsAreOneLine() throws {
        for arguments in [["model"], ["model", "a", "--ddl", "--json"], ["nonsense"]] {
            let result = try FaultlineBinary.run(arguments)
            #expect(result.status != 0)
            #expect(result.stderr.hasPrefix("error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
    }
}
