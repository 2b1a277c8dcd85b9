//! Ready-made policies. Each file is one policy; smarter bots add theirs here.

pub mod random;
