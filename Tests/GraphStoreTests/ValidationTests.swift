import Foundation
import GRDB
import GraphStore
import Testing

/// Validation at save: each rule failing and passing, every failure gathered into one error, nothing written by a
/// failed save, uniqueness checked in memory and against the store.
@Suite struct ValidationTests {
    /// Users in chats, polls with options, seats, and contacts of two kinds sharing a table.
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("User") {
                Attribute("name", .string).required()
                Attribute("handle", .string).required().minimum("3").maximum("12").matching("[a-z0-9_]+")
                Attribute("phone", .string).matching("[0-9+ ]+")
                Attribute("bio", .string).maximum("4")
                Attribute("age", .integer16).minimum("13").maximum("130")
                Attribute("score", .double).minimum("0").maximum("1")
                Attribute("balance", .decimal).minimum("0")
                Attribute("joinedAt", .date).minimum("0")
                Attribute("avatar", .binaryData).maximum("4")
                Attribute("draft", .string).required().transient()
                Attribute.derived("chatsCount", "chats.@count")
                Relationship.toMany("chats", "Chat", inverse: "members")
                Relationship.toMany("ownedChats", "Chat", inverse: "owner")
                Unique("handle")
            }
            EntityDescription("Chat") {
                Attribute("title", .string).required()
                Relationship.toOne("owner", "User", inverse: "ownedChats").required()
                Relationship.toMany("members", "User", inverse: "chats", minCount: 2, maxCount: 3)
            }
            EntityDescription("Poll") {
                Attribute("question", .string)
                Relationship.toMany("options", "Option", inverse: "poll").required()
            }
            EntityDescription("Option") {
                Attribute("label", .string)
                Relationship.toOne("poll", "Poll", inverse: "options")
            }
            EntityDescription("Seat") {
                Attribute("row", .string)
                Attribute("number", .integer32)
                Unique("row", "number")
            }
            EntityDescription("Contact", abstract: true) {
                Attribute("email", .string)
                Unique("email")
            }
            EntityDescription("Person", parent: "Contact") {
                Attribute("name", .string)
            }
            EntityDescription("Company", parent: "Contact") {
                Attribute("vat", .string)
            }
        }
    }

    // MARK: helpers

    /// The failures a save reported, or nil when it saved; any other error is recorded as an issue.
    private func saveFailures(_ context: ObjectContext) -> [ValidationFailure]? {
        do {
            try context.save()
            return nil
        } catch {
            guard case .validation(let failures) = error else {
                Issue.record("expected a validation error, got \(error)")
                return []
            }
            return failures
        }
    }

    /// `Entity key reason` for each failure, for compact comparisons.
    private func summary(_ failures: [ValidationFailure]?) -> [String]? {
        failures?.map { "\($0.entity) \($0.key) \($0.reason)" }
    }

    /// A user with valid values for every rule.
    @discardableResult
    private func user(_ context: ObjectContext, _ handle: String, name: String = "Someone") -> ManagedObject {
        let user = context.insert("User")
        user.setValue(name, forKey: "name")
        user.setValue(handle, forKey: "handle")
        return user
    }

    private func count(_ fixture: GraphFixture, _ table: String) throws -> Int {
        try fixture.sqlRows("SELECT COUNT(*) FROM \(table)")[0][0]
    }

    // MARK: attributes

    @Test func requiredAttributesMustBeSetButTransientAndDerivedOnesAreExempt() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let nameless = context.insert("User")
        nameless.setValue("ana", forKey: "handle")
        #expect(summary(saveFailures(context)) == ["User name is required"])
        // `draft` is required but transient, `chatsCount` derived: neither is asked for.
        nameless.setValue("Ana", forKey: "name")
        #expect(saveFailures(context) == nil)
        #expect(try count(fixture, "ZUSER") == 1)
    }

    @Test func numbersAndDatesCompareWithTheirBoundsByValue() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let young = user(context, "young")
        young.setValue(12, forKey: "age")
        let old = user(context, "old")
        old.setValue(131, forKey: "age")
        let negative = user(context, "negative")
        negative.setValue(-0.5, forKey: "score")
        negative.setValue(Decimal(string: "-0.01")!, forKey: "balance")
        let early = user(context, "early")
        early.setValue(Date(timeIntervalSinceReferenceDate: -1), forKey: "joinedAt")
        early.setValue(1.5, forKey: "score")
        #expect(summary(saveFailures(context)) == [
            "User age must be at least 13",
            "User age must be at most 130",
            "User score must be at least 0",
            "User balance must be at least 0",
            "User score must be at most 1",
            "User joinedAt must be no earlier than 2001-01-01T00:00:00Z",
        ])

        // The bounds themselves are allowed.
        young.setValue(13, forKey: "age")
        old.setValue(130, forKey: "age")
        negative.setValue(0.0, forKey: "score")
        negative.setValue(Decimal(0), forKey: "balance")
        early.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "joinedAt")
        early.setValue(1.0, forKey: "score")
        #expect(saveFailures(context) == nil)
        #expect(try count(fixture, "ZUSER") == 4)
    }

    @Test func stringAndDataBoundsAreLengths() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let short = user(context, "ab")
        let long = user(context, "abcdefghijklm")
        long.setValue(Data([1, 2, 3, 4, 5]), forKey: "avatar")
        // Lengths count UTF-16 units, as NSString does: one emoji is two.
        let emoji = user(context, "emoji")
        emoji.setValue("😀😀😀", forKey: "bio")
        #expect(summary(saveFailures(context)) == [
            "User handle must have at least 3 characters",
            "User handle must have at most 12 characters",
            "User avatar must have at most 4 bytes",
            "User bio must have at most 4 characters",
        ])
        short.setValue("abc", forKey: "handle")
        long.setValue("abcdefghijkl", forKey: "handle")
        long.setValue(Data([1, 2, 3, 4]), forKey: "avatar")
        emoji.setValue("😀😀", forKey: "bio")
        #expect(saveFailures(context) == nil)
    }

    @Test func regularExpressionsMustMatchTheWholeString() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let dashes = user(context, "dashes")
        dashes.setValue("555-0100", forKey: "phone")
        let prefix = user(context, "prefix")
        prefix.setValue("555 0100x", forKey: "phone")
        let newline = user(context, "newline")
        newline.setValue("555\n", forKey: "phone")
        let upper = user(context, "Upper")
        #expect(summary(saveFailures(context)) == [
            "User phone must match [0-9+ ]+",
            "User phone must match [0-9+ ]+",
            "User phone must match [0-9+ ]+",
            "User handle must match [a-z0-9_]+",
        ])
        dashes.setValue("+1 555 0100", forKey: "phone")
        prefix.setValue(nil, forKey: "phone")  // nil is not matched: only `required` asks for a value
        newline.setValue("555", forKey: "phone")
        upper.setValue("upper", forKey: "handle")
        #expect(saveFailures(context) == nil)
    }

    // MARK: relationships

    @Test func requiredToOnesMustPointAtALiveObject() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let ana = user(context, "ana")
        try context.save()

        let chat = context.insert("Chat")
        chat.setValue("Plans", forKey: "title")
        #expect(summary(saveFailures(context)) == ["Chat owner is required"])
        // An owner deleted in the same save does not count.
        chat.setValue(ana, forKey: "owner")
        context.delete(ana)
        #expect(summary(saveFailures(context)) == ["Chat owner is required"])
        context.rollback()

        let again = context.insert("Chat")
        again.setValue("Plans", forKey: "title")
        again.setValue(try context.existingObject(with: ana.objectID), forKey: "owner")
        #expect(saveFailures(context) == nil)
        #expect(try count(fixture, "ZCHAT") == 1)
    }

    @Test func toManyCountsRespectMinimumAndMaximum() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let users = (0..<4).map { user(context, "user\($0)") }
        func chat(_ title: String, _ members: [ManagedObject]) -> ManagedObject {
            let chat = context.insert("Chat")
            chat.setValue(title, forKey: "title")
            chat.setValue(users[0], forKey: "owner")
            chat.setValue(members, forKey: "members")
            return chat
        }
        let lonely = chat("lonely", [users[0]])
        let crowded = chat("crowded", users)
        _ = chat("empty", [])  // optional: empty is fine whatever minCount says
        _ = chat("pair", Array(users.prefix(2)))
        _ = chat("trio", Array(users.prefix(3)))
        let poll = context.insert("Poll")
        #expect(summary(saveFailures(context)) == [
            "Chat members has 1 member, at least 2 required",
            "Chat members has 4 members, at most 3 allowed",
            "Poll options has 0 members, at least 1 required",
        ])

        lonely.add(users[1], toKey: "members")
        crowded.remove(users[3], fromKey: "members")
        let option = context.insert("Option")
        option.setValue(poll, forKey: "poll")
        #expect(saveFailures(context) == nil)
        #expect(try count(fixture, "ZCHAT") == 5)
    }

    @Test func membersDeletedInTheSameSaveAreNotCounted() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let users = (0..<4).map { user(context, "user\($0)") }
        let chat = context.insert("Chat")
        chat.setValue("Plans", forKey: "title")
        chat.setValue(users[0], forKey: "owner")
        chat.setValue(Array(users.prefix(3)), forKey: "members")
        try context.save()

        // Four members in memory, but one of them goes with this save: three remain, the maximum.
        context.delete(users[1])
        chat.add(users[3], toKey: "members")
        #expect(chat.count(forKey: "members") == 4)
        #expect(saveFailures(context) == nil)
        let check = fixture.context("check")
        #expect(try check.existingObject(with: chat.objectID).count(forKey: "members") == 3)
    }

    // MARK: collecting failures

    @Test func everyFailureIsCollectedInOrderAndAFailedSaveWritesNothing() throws {
        let fixture = try GraphFixture(try Self.model())
        let setup = fixture.context("setup")
        let ana = user(setup, "ana", name: "Ana")
        try setup.save()
        let before = try fixture.tableDump()

        let context = fixture.context()
        let stored = try context.existingObject(with: ana.objectID)
        stored.setValue(nil, forKey: "name")
        let nameless = context.insert("User")
        nameless.setValue("bo", forKey: "handle")
        let chat = context.insert("Chat")
        chat.setValue([nameless], forKey: "members")

        let failures = try #require(saveFailures(context))
        #expect(summary(failures) == [
            "User name is required",
            "User handle must have at least 3 characters",
            "Chat title is required",
            "Chat owner is required",
            "Chat members has 1 member, at least 2 required",
            "User name is required",
        ])
        #expect(failures.map(\.objectURI) == [
            nameless.uriRepresentation, nameless.uriRepresentation,
            chat.uriRepresentation, chat.uriRepresentation, chat.uriRepresentation,
            stored.uriRepresentation,
        ])
        #expect(nameless.uriRepresentation.hasPrefix("x-coredata:///User/t"))
        #expect(stored.uriRepresentation.hasSuffix("/User/p1"))
        let error = ContextError.validation(failures)
        #expect(error.description == "validation failed: "
            + "\(nameless.uriRepresentation) name is required; \(nameless.uriRepresentation) handle must have at least 3 characters; "
            + "\(chat.uriRepresentation) title is required; \(chat.uriRepresentation) owner is required; "
            + "\(chat.uriRepresentation) members has 1 member, at least 2 required; \(stored.uriRepresentation) name is required")
        #expect(!error.description.contains("\n"))

        // Nothing written (not even a key reserved) and every change still pending.
        #expect(try fixture.tableDump() == before)
        #expect(context.hasChanges)
        #expect(context.insertedObjects.count == 2)
        #expect(context.updatedObjects == [stored])
        #expect(nameless.isInserted && stored.isUpdated)

        // Fixed, the same changes save.
        stored.setValue("Ana Lima", forKey: "name")
        nameless.setValue("Bo", forKey: "name")
        nameless.setValue("bob", forKey: "handle")
        chat.setValue("Plans", forKey: "title")
        chat.setValue(nameless, forKey: "owner")
        chat.add(stored, toKey: "members")
        #expect(saveFailures(context) == nil)
        #expect(!context.hasChanges)
        #expect(try count(fixture, "ZUSER") == 2)
        #expect(try count(fixture, "ZCHAT") == 1)
        let names: [String] = try fixture.sqlRows("SELECT ZNAME FROM ZUSER ORDER BY Z_PK").map { $0[0] }
        #expect(names == ["Ana Lima", "Bo"])
    }

    // MARK: updates and deletions

    @Test func updatesAreValidatedOnWhatChanged() throws {
        let fixture = try GraphFixture(try Self.model())
        let setup = fixture.context("setup")
        let owner = user(setup, "owner")
        let guest = user(setup, "guest")
        let chat = setup.insert("Chat")
        chat.setValue("Plans", forKey: "title")
        chat.setValue(owner, forKey: "owner")
        chat.setValue([owner, guest], forKey: "members")
        try setup.save()

        let context = fixture.context()
        let stored = try context.existingObject(with: chat.objectID)
        stored.setValue(nil, forKey: "title")
        stored.setValue(nil, forKey: "owner")
        #expect(summary(saveFailures(context)) == ["Chat title is required", "Chat owner is required"])
        context.rollback()

        // An edit leaves unchanged to-manys alone: no relationship fault.
        stored.setValue("Plans for Friday", forKey: "title")
        let cost = try fixture.measure { #expect(saveFailures(context) == nil) }
        #expect(cost.relationshipFaults == 0)

        // A changed to-many is counted, its fault fired when it had not been.
        let other = fixture.context("other")
        let again = try other.existingObject(with: chat.objectID)
        again.remove(try other.existingObject(with: guest.objectID), fromKey: "members")
        let removal = try fixture.measure {
            #expect(summary(saveFailures(other)) == ["Chat members has 1 member, at least 2 required"])
        }
        #expect(removal.relationshipFaults == 1)
    }

    @Test func deletedObjectsAreNotValidated() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let ana = user(context, "ana")
        try context.save()

        // An insert deleted again, and a stored object broken then deleted: neither is checked.
        let draft = context.insert("Chat")
        context.delete(draft)
        ana.setValue(nil, forKey: "name")
        ana.setValue("x", forKey: "handle")
        context.delete(ana)
        #expect(saveFailures(context) == nil)
        #expect(try count(fixture, "ZUSER") == 0)
        #expect(try count(fixture, "ZCHAT") == 0)
    }

    // MARK: uniqueness

    @Test func uniquenessWithinPendingInserts() throws {
        let fixture = try GraphFixture(try Self.model())
        let context = fixture.context()
        let first = user(context, "ana")
        user(context, "bob")
        let second = user(context, "ana")
        let failures = try #require(saveFailures(context))
        #expect(summary(failures) == [
            "User handle is not unique: another User has handle 'ana'",
            "User handle is not unique: another User has handle 'ana'",
        ])
        #expect(failures.map(\.objectURI) == [first.uriRepresentation, second.uriRepresentation])
        #expect(try count(fixture, "ZUSER") == 0)

        second.setValue("ana_2", forKey: "handle")
        #expect(saveFailures(context) == nil)
        #expect(try count(fixture, "ZUSER") == 3)
    }

    /// The store's unique index compares text byte for byte, so two spellings of one character (a precomposed `é`,
    /// `e` + combining acute) are two values: neither among pending inserts nor against a stored row is that a clash.
    @Test func uniquenessTellsTwoSpellingsApart() throws {
        let model = try ObjectModel {
            EntityDescription("Tag") {
                Attribute("label", .string).required()
                Unique("label")
            }
        }
        let fixture = try GraphFixture(model)
        func tag(_ context: ObjectContext, _ label: String) { context.insert("Tag").setValue(label, forKey: "label") }
        let setup = fixture.context("setup")
        tag(setup, "jos\u{E9}")
        tag(setup, "jose\u{301}")
        #expect(saveFailures(setup) == nil)
        let context = fixture.context()
        tag(context, "ren\u{E9}")
        tag(context, "rene\u{301}")
        tag(context, "jose\u{301}")
        #expect(summary(saveFailures(context)) == ["Tag label is not unique: another Tag has label 'jose\u{301}'"])
        #expect(try count(fixture, "ZTAG") == 2)
    }

    @Test func uniquenessAgainstTheStoreWithOneQuery() throws {
        let fixture = try GraphFixture(try Self.model())
        let setup = fixture.context("setup")
        let ana = user(setup, "ana")
        let bob = user(setup, "bob")
        try setup.save()

        let context = fixture.context()
        let newcomer = user(context, "ana")
        user(context, "cyd")
        user(context, "dee")
        var failures: [ValidationFailure]?
        let cost = try fixture.measure { failures = saveFailures(context) }
        #expect(summary(failures) == ["User handle is not unique: another User has handle 'ana'"])
        #expect(failures?.first?.objectURI == newcomer.uriRepresentation)
        // One SELECT for the one constraint, whatever the number of candidates.
        #expect(cost.statements == 1)

        // An update to a taken value fails; a value freed by a rename in the same save may be taken.
        context.rollback()
        let storedAna = try context.existingObject(with: ana.objectID)
        let storedBob = try context.existingObject(with: bob.objectID)
        storedBob.setValue("ana", forKey: "handle")
        #expect(summary(saveFailures(context)) == ["User handle is not unique: another User has handle 'ana'"])
        context.rollback()
        storedAna.setValue("ann", forKey: "handle")
        storedBob.setValue("ana", forKey: "handle")
        #expect(saveFailures(context) == nil)
        let handles: [String] = try fixture.sqlRows("SELECT ZHANDLE FROM ZUSER ORDER BY Z_PK").map { $0[0] }
        #expect(handles == ["ann", "ana"])

        // Setting an object's own value again does not collide with its own row.
        storedBob.setValue("ana", forKey: "handle")
        #expect(saveFailures(context) == nil)
    }

    @Test func multiKeyAndInheritedConstraints() throws {
        let fixture = try GraphFixture(try Self.model())
        let setup = fixture.context("setup")
        let seat = setup.insert("Seat")
        seat.setValue("A", forKey: "row")
        seat.setValue(1, forKey: "number")
        let person = setup.insert("Person")
        person.setValue("ana@example.com", forKey: "email")
        try setup.save()

        let context = fixture.context()
        let taken = context.insert("Seat")
        taken.setValue("A", forKey: "row")
        taken.setValue(1, forKey: "number")
        let free = context.insert("Seat")
        free.setValue("A", forKey: "row")
        free.setValue(2, forKey: "number")
        let partial = context.insert("Seat")
        partial.setValue("A", forKey: "row")  // a nil key: never a duplicate
        let company = context.insert("Company")
        company.setValue("ana@example.com", forKey: "email")
        let otherCompany = context.insert("Company")
        otherCompany.setValue("bo@example.com", forKey: "email")
        #expect(summary(saveFailures(context)) == [
            "Seat row,number is not unique: another Seat has row 'A', number 1",
            "Company email is not unique: another Person has email 'ana@example.com'",
        ])
        taken.setValue(3, forKey: "number")
        company.setValue("info@example.com", forKey: "email")
        #expect(saveFailures(context) == nil)
        #expect(try count(fixture, "ZSEAT") == 4)
        #expect(try count(fixture, "ZCONTACT") == 3)
    }
}
