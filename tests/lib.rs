//! Nothing here: the crate exists for its one test binary (`main.rs`), whose modules are the
//! end-to-end test files. Cargo wants a library or binary target in every package.
