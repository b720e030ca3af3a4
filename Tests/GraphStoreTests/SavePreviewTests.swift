@testable import GraphStore
import Foundation
import GRDB
import Synchronization
import Testing

/// `savePreview()` answers "what would this save do?" from the same pending changes a save plans from, without
/// writing or changing the context: inserts, updates and deletes per entity, link writes, and the whole effect of the
/// deletes as `deletionPlan(for:)` counts it.
@Suite struct SavePreviewTests {
    static func model() throws -> ObjectModel {
        try ObjectModel {
            EntityDescription("Folder") {
                Attribute("name", .string)
                Relationship.toMany("notes", "Note", inverse: "folder", deleteRule: .cascade)
            }
            EntityDescription("Note") {
                Attribute("title", .string)
                Relationship.toOne("folder", "Folder", inverse: "notes")
                Relationship.toMany("tags", "Tag", inverse: "notes")
            }
            EntityDescription("Tag") {
                Attribute("name", .string)
                Relationship.toMany("notes", "Note", inverse: "tags")
            }
        }
    }

    /// A store with two folders of three notes each, every note tagged once.
    static func store(in folder: TemporaryDirectory) throws -> (PersistentStoreCoordinator, path: String) {
        let path = folder.path("notes.sqlite")
        let coordinator = try PersistentStoreCoordinator(path: path, model: try model())
        let context = ObjectContext(coordinator: coordinator)
        let tag = context.insert("Tag")
        tag.setValue("work", forKey: "name")
        for folderNumber in 1...2 {
            let folder = context.insert("Folder")
            folder.setValue("folder \(folderNumber)", forKey: "name")
            for noteNumber in 1...3 {
                let note = context.insert("Note")
                note.setValue("note \(folderNumber).\(noteNumber)", forKey: "title")
                note.setObject(folder, forKey: "folder")
                note.add(tag, toKey: "tags")
            }
        }
        try context.save()
        return (coordinator, path)
    }

    @Test func thePreviewCountsWhatTheSaveThenDoes() throws {
        let folder = try TemporaryDirectory()
        let (coordinator, path) = try Self.store(in: folder)
        let context = ObjectContext(coordinator: coordinator)
        let folders = try context.fetch("Folder")
        let notes = try context.fetch("Note")
        let tag = try #require(try context.fetch("Tag").first)
        // One folder deleted (its three notes cascade), one note renamed, one new note tagged, one tag link removed.
        context.delete(folders[0])
        notes[4].setValue("renamed", forKey: "title")
        let added = context.insert("Note")
        added.setValue("new", forKey: "title")
        added.setObject(folders[1], forKey: "folder")
        added.add(tag, toKey: "tags")
        notes[5].remove(tag, fromKey: "tags")

        let statements = Mutex<[String]>([])
        let token = coordinator.events.addObserver { record in
            if case .statement(let statement) = record.event { statements.withLock { $0.append(statement.sql) } }
        }
        let fileBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        let preview = try context.savePreview()
        coordinator.events.removeObserver(token)

        #expect(preview.inserted == ["Note": 1])
        // The renamed note and the untagged one; the folder and the tag whose to-manys the inverses changed.
        #expect(preview.updated == ["Note": 2, "Folder": 1, "Tag": 1])
        #expect(preview.deleted == ["Folder": 1])
        #expect(preview.linkWrites == 2)
        #expect(preview.reversals == 0)
        let deletion = try #require(preview.deletion)
        #expect(deletion == (try context.deletionPlan(for: [folders[0]])))
        #expect(deletion.deleted == ["Folder": 1, "Note": 3])
        // Only reads ran, the file is as it was, and the context still holds every change.
        #expect(!statements.withLock { $0 }.isEmpty)
        #expect(statements.withLock { $0 }.allSatisfy { $0.hasPrefix("SELECT") || $0.hasPrefix("WITH") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == fileBefore)
        #expect(context.hasChanges)
        #expect(context.insertedObjects.count == 1)

        try context.save()
        let counts = try DatabaseQueue(path: path).read { db in
            (folders: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZFOLDER") ?? -1,
             notes: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZNOTE") ?? -1)
        }
        #expect(counts.folders == 1)
        #expect(counts.notes == 6 - 3 + 1)
    }

    @Test func nothingPendingPreviewsNothing() throws {
        let folder = try TemporaryDirectory()
        let (coordinator, _) = try Self.store(in: folder)
        let context = ObjectContext(coordinator: coordinator)
        let preview = try context.savePreview()
        #expect(preview == SavePreview(inserted: [:], updated: [:], deleted: [:], linkWrites: 0, reversals: 0, deletion: nil))
    }
}
