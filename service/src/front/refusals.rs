//! The last refusal of a seat's calls (Watch, Act) for its credentials, kept so that a ladder
//! that pauses a connected bot for not playing can say why its seat was silent: "Watch answered
//! UNAUTHENTICATED: …" rather than a guess. Bounded: the newest [`KEEP`] seats.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tonic::{Code, Status};

/// Seats whose last refusal is kept.
const KEEP: usize = 4096;
/// A kept message's length at most, in bytes.
const MAX_MESSAGE: usize = 300;

/// The refusals kept, by (game id, seat token). Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct Refusals(Arc<Mutex<Kept>>);

#[derive(Debug, Default)]
struct Kept {
    by_seat: HashMap<(String, String), String>,
    order: VecDeque<(String, String)>,
}

impl Refusals {
    /// Notes `status` as the answer to `method` for the seat of `token` in `game_id`, when it
    /// refused the caller's credentials (PERMISSION_DENIED, UNAUTHENTICATED).
    pub fn note(&self, game_id: &str, token: &str, method: &str, status: &Status) {
        if !matches!(
            status.code(),
            Code::PermissionDenied | Code::Unauthenticated
        ) || game_id.is_empty()
            || token.is_empty()
        {
            return;
        }
        let mut message = status.message().to_string();
        if message.len() > MAX_MESSAGE {
            let mut end = MAX_MESSAGE;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        let said = format!(
            "{method} answered {}: {message}",
            gangs_proto::code_name(status.code())
        );
        let key = (game_id.to_string(), token.to_string());
        let mut kept = self.0.lock().expect("refusals lock");
        if kept.by_seat.insert(key.clone(), said).is_none() {
            kept.order.push_back(key);
            while kept.order.len() > KEEP {
                if let Some(oldest) = kept.order.pop_front() {
                    kept.by_seat.remove(&oldest);
                }
            }
        }
    }

    /// The last refusal of the seat of `token` in `game_id`, in words, if one is kept.
    pub fn of_seat(&self, game_id: &str, token: &str) -> Option<String> {
        let kept = self.0.lock().expect("refusals lock");
        kept.by_seat
            .get(&(game_id.to_string(), token.to_string()))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_refused_credentials_are_kept_and_the_newest_seats_win() {
        let refusals = Refusals::default();
        refusals.note("g", "t", "Act", &Status::aborted("stale"));
        assert_eq!(refusals.of_seat("g", "t"), None);
        refusals.note("g", "t", "Watch", &Status::unauthenticated("no key"));
        assert_eq!(
            refusals.of_seat("g", "t").as_deref(),
            Some("Watch answered UNAUTHENTICATED: no key")
        );
        for i in 0..KEEP {
            refusals.note(
                &format!("g{i}"),
                "t",
                "Act",
                &Status::permission_denied("x"),
            );
        }
        assert_eq!(refusals.of_seat("g", "t"), None, "the oldest seat left");
        assert!(refusals.of_seat(&format!("g{}", KEEP - 1), "t").is_some());
    }
}
