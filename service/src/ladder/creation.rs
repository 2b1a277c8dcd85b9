//! A new ladder and its bots' keys: CreateLadder's request checked and filled in (the
//! options parsed by the games' own parser, clocks included, every default set), and the hash
//! a bot key is kept and looked up as (the key itself is shown once, never kept).

use super::house;
use crate::error::HostError;
use gangs_proto::v1 as pb;

/// The default clocks of a ladder's games (`docs/ladder.md`).
pub const DEFAULT_TURN_MS: u64 = 2000;
pub const DEFAULT_ABSENT_AFTER: u32 = 3;
/// SHA-256 of a bot key, hex: what the log keeps and keys are looked up by.
pub fn key_hash(key: &str) -> String {
    crate::secret::sha256_hex(key)
}

/// A ladder's creation from a request within its bounds: the options parsed and checked by the
/// games' own parser (clocks included), every default filled in.
pub fn ladder_of(request: &pb::CreateLadderRequest, now: i64) -> Result<pb::Ladder, HostError> {
    if request.kind.is_empty() {
        return Err(HostError::invalid_argument(format!(
            "kind is required: one of {}",
            gangs_games::kind_names().join(", ")
        )));
    }
    let refused = |e: gangs_games::Refusal| HostError::invalid_argument(e.to_string());
    gangs_games::kind(&request.kind).map_err(refused)?;
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (key, value) in &request.options {
        if matches!(key.as_str(), "turn_ms" | "bank_ms" | "absent_after") {
            return Err(HostError::invalid_argument(format!(
                "option {key}: a ladder's clocks go in the request's own {key} field (--turn-ms)"
            )));
        }
        pairs.push((key.clone(), value.clone()));
    }
    pairs.sort();
    let turn_ms = request.turn_ms.unwrap_or(DEFAULT_TURN_MS);
    pairs.push(("turn_ms".into(), turn_ms.to_string()));
    if let Some(bank_ms) = request.bank_ms {
        pairs.push(("bank_ms".into(), bank_ms.to_string()));
    }
    let absent_after = request.absent_after.unwrap_or(DEFAULT_ABSENT_AFTER);
    pairs.push(("absent_after".into(), absent_after.to_string()));
    let options =
        gangs_games::parse_options(&request.kind, request.players, &pairs).map_err(refused)?;
    let game = gangs_games::new_game(&request.kind, Some(&options), 0, None).map_err(refused)?;
    house::check(&request.kind, &request.house_bots)?;
    if let Some(ends) = request.season_ends_unix_ms {
        check_future("season_ends_unix_ms", ends, now)?;
    }
    let clock = game.clock();
    Ok(pb::Ladder {
        name: request.name.clone(),
        kind: request.kind.clone(),
        players: game.players() as u32,
        options: Some(game.options()),
        duplicate: request.duplicate,
        created_unix_ms: now,
        bots: 0,
        games: 0,
        turn_ms: clock.turn_ms,
        bank_ms: clock.bank_ms,
        absent_after: clock.absent_after,
        house_bots: request.house_bots.clone(),
        season: 1,
        season_started_unix_ms: now,
        season_ends_unix_ms: request.season_ends_unix_ms,
        hosted_fuel: request.hosted_fuel.unwrap_or(gangs_hosted::DEFAULT_FUEL),
        hosted_memory_bytes: request
            .hosted_memory_bytes
            .unwrap_or(gangs_hosted::DEFAULT_MEMORY_BYTES),
        hosted_module_bytes: request
            .hosted_module_bytes
            .unwrap_or(gangs_hosted::DEFAULT_MODULE_BYTES),
    })
}

/// A season's planned end must be to come.
pub(super) fn check_future(field: &str, at: i64, now: i64) -> Result<(), HostError> {
    if at <= now {
        return Err(HostError::invalid_argument(format!(
            "{field} {at} ({}) is not in the future: give a time to come, or end the season now (gangs ladder season NAME --end)",
            gangs_proto::time::utc_text(at)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ladder_always_has_clocks() {
        let request = pb::CreateLadderRequest {
            name: "class-2026".into(),
            kind: "gang-of-four".into(),
            ..Default::default()
        };
        let ladder = ladder_of(&request, 1).unwrap();
        assert_eq!(ladder.players, 4);
        assert_eq!((ladder.turn_ms, ladder.absent_after), (2000, 3));
        let request = pb::CreateLadderRequest {
            turn_ms: Some(150),
            players: Some(3),
            kind: "the-gang".into(),
            ..request
        };
        let ladder = ladder_of(&request, 1).unwrap();
        assert_eq!((ladder.turn_ms, ladder.players), (150, 3));
    }

    #[test]
    fn bad_ladders_are_refused_with_the_reason() {
        let good = pb::CreateLadderRequest {
            name: "a".into(),
            kind: "gang-of-four".into(),
            ..Default::default()
        };
        // As the front checks it: its bounds, then the ladder.
        let refused = |request: pb::CreateLadderRequest| {
            crate::bounds::Bounded::check_bounds(&request)
                .and_then(|()| ladder_of(&request, 1))
                .unwrap_err()
        };
        let status = refused(pb::CreateLadderRequest {
            name: "no spaces".into(),
            ..good.clone()
        });
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        let status = refused(pb::CreateLadderRequest {
            kind: "chess".into(),
            ..good.clone()
        });
        assert!(status.message().contains("unknown game kind"), "{status:?}");
        let status = refused(pb::CreateLadderRequest {
            turn_ms: Some(1),
            ..good.clone()
        });
        assert!(status.message().contains("turn_ms"), "{status:?}");
        let mut options = good.clone();
        options.options.insert("turn_ms".into(), "100".into());
        assert!(refused(options).message().contains("--turn-ms"));
        let mut options = good;
        options.options.insert("no_such_option".into(), "1".into());
        assert_eq!(refused(options).code(), tonic::Code::InvalidArgument);
    }

    #[test]
    fn keys_are_kept_as_their_hash() {
        let hash = key_hash("secret");
        assert_eq!(hash.len(), 64);
        assert_ne!(hash, key_hash("secret2"));
        assert_eq!(
            hash,
            "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
        );
    }
}
