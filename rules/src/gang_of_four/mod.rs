//! PLACEHOLDER until the engine lands.
