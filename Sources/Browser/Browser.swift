/// The chat browser: state, actions, the update that carries actions out through the graph store, and pure views
/// that turn state into styled lines. Nothing here draws: the terminal layer (or `faultline trace`) does.
public enum Browser {}
