import ChatFixture
import Foundation
import GraphStore

/// A small chat store on the chat model, written through a context: six users; eight chats (four direct, four
/// group) with two to four members each, three to five messages each, every message read by its sender; each
/// chat's last message set. The row cache starts empty.
final class ChatStore {
    let fixture: GraphFixture
    var chats: [ObjectID] = []

    init() throws {
        fixture = try GraphFixture(try ChatModel.make())
        let context = fixture.context("setup")
        let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let users = ["Ana", "Budi", "Chaiya", "Dewi", "Eun", "Fumiko"].enumerated().map { offset, name -> ManagedObject in
            let user = context.insert("User")
            user.setValue(name, forKey: "name")
            user.setValue(name.lowercased(), forKey: "handle")
            user.setValue(base, forKey: "createdAt")
            return user
        }
        for index in 0..<8 {
            let chat = context.insert(index < 4 ? "DirectChat" : "GroupChat")
            chat.setValue(["Lunch", "art club", "Boats", "Camping", "alpha", "Budget", "Coffee", "dance"][index], forKey: "title")
            chat.setValue(base, forKey: "createdAt")
            chat.setValue(index == 5, forKey: "isPinned")
            let memberCount = 2 + index % 3
            for offset in 0..<memberCount {
                let member = context.insert("ChatMember")
                member.setValue(base, forKey: "joinedAt")
                member.setObject(users[(index + offset) % users.count], forKey: "user")
                member.setObject(chat, forKey: "chat")
            }
            var last: ManagedObject?
            for number in 0..<(3 + index % 3) {
                let message = context.insert("Message")
                let sender = users[(index + number) % users.count]
                message.setValue("message \(number) of chat \(index)", forKey: "text")
                // Chats' latest messages interleave so that time order differs from key order.
                message.setValue(base.addingTimeInterval(Double(number * 100 + (index * 37) % 90)), forKey: "sentAt")
                message.setObject(sender, forKey: "sender")
                message.setObject(chat, forKey: "chat")
                message.add(sender, toKey: "readBy")
                last = message
            }
            chat.setObject(last, forKey: "lastMessage")
            chat.setValue((last?.value(forKey: "sentAt") as? Date), forKey: "lastMessageAt")
        }
        try context.save()
        chats = try context.fetchObjectIDs(FetchRequest(entityName: "Chat", sortDescriptors: [.init("title")]))
        fixture.coordinator.rowCache.removeAll()
    }

    var coordinator: PersistentStoreCoordinator { fixture.coordinator }

    /// The statements `work` ran, in order.
    func statements(_ work: () throws -> Void) rethrows -> [StatementEvent] {
        let recorder = SQLRecorder(coordinator)
        try work()
        return recorder.statements
    }
}
