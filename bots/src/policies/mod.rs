//! Ready-made policies. Each file is one policy; smarter bots add theirs here.

pub mod crew;
pub mod gang_of_four;
pub mod greedy;
pub mod random;
pub mod search;
pub mod the_gang;
