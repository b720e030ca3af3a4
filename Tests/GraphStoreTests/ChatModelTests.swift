import ChatFixture
import Foundation
import GraphStore
import Testing

/// The chat model resolves, lays out as expected, and its typed classes work through the graph.
@Suite struct ChatModelTests {
    @Test func theChatModelResolvesIntoTheExpectedTables() throws {
        let model = try ChatModel.make()
        #expect(model.entities.map(\.name) == [
            "Attachment", "Chat", "DirectChat", "GroupChat", "ChatMember", "Folder", "Message", "Reaction", "User", "UserProfile",
        ])
        let schema = StoreSchema(model: model)
        let tables = Set(schema.tables.map(\.name))
        #expect(tables == ["ZATTACHMENT", "ZCHAT", "ZCHATMEMBER", "ZFOLDER", "ZMESSAGE", "ZREACTION", "ZUSER", "ZUSERPROFILE"])
        // Messages point at a chat of either kind, so the foreign key carries the entity too.
        #expect(schema.column(forAttribute: "text", of: "Message") == "ZTEXT")
        #expect(schema.joinTables.map(\.name).sorted() == ["Z_2FOLDERS", "Z_7MENTIONS", "Z_7READBY", "Z_9FRIENDS"])
    }
}
