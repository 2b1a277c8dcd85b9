//! Shared bot plumbing.
