/// Validation at save (being written).
extension ObjectContext {
    func validateForSave() throws(ContextError) {}
}
