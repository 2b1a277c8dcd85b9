//! Integers from the wire and the command line are checked, never narrowed or overflowed: an
//! out-of-range value is a clear refusal (the host turns it into INVALID_ARGUMENT), never a
//! panic (which would kill the game's actor) or a silently different value.

use gangs_games::{new_game, parse_options};

const THE_GANG: &str = gangs_games::the_gang::KIND.name;
use gangs_proto::v1 as pb;

fn the_gang(deadline: Option<u64>) -> Result<Box<dyn gangs_games::Game>, String> {
    let options = pb::GameOptions {
        game: Some(pb::game_options::Game::TheGang(pb::TheGangOptions {
            players: Some(3),
            phase_deadline_ms: deadline,
            ..Default::default()
        })),
    };
    new_game(THE_GANG, Some(&options), 1, None).map_err(|e| e.message().to_string())
}

#[test]
fn phase_deadline_ms_outside_its_range_is_refused() {
    for bad in [0, 99, 604_800_001, 1 << 63, u64::MAX] {
        let error = the_gang(Some(bad)).err().expect("refused");
        assert!(
            error.contains("phase_deadline_ms must be 100 to 604800000"),
            "{bad}: {error}"
        );
    }
    for good in [100, 30_000, 604_800_000] {
        assert!(the_gang(Some(good)).is_ok(), "{good}");
    }
    assert!(the_gang(None).is_ok());
}

#[test]
fn command_line_numbers_are_not_truncated() {
    let pairs = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    for kind in ["the-gang", "gang-of-four"] {
        // 4294967299 = 2^32 + 3: truncated to u32 it would be a valid 3.
        let error = parse_options(kind, None, &pairs("players", "4294967299"))
            .err()
            .unwrap_or_else(|| panic!("{kind}: players=4294967299 accepted"));
        assert!(
            error.message().contains("players"),
            "{kind}: {}",
            error.message()
        );
    }
    let error = parse_options(
        "the-gang",
        None,
        &pairs("max_moves_per_phase", "4294967296"),
    )
    .expect_err("refused");
    assert!(
        error.message().contains("max_moves_per_phase"),
        "{}",
        error.message()
    );
    let error =
        parse_options("the-gang", None, &pairs("phase_deadline_ms", "0")).expect_err("refused");
    assert!(
        error.message().contains("phase_deadline_ms"),
        "{}",
        error.message()
    );
}

#[test]
fn extreme_enum_values_are_refused_without_a_panic() {
    let mut game = the_gang(None).expect("a game");
    game.start();
    for category in [i32::MIN, -1, 0, i32::MAX] {
        let action = pb::GameAction {
            game: Some(pb::game_action::Game::TheGang(pb::TheGangAction {
                kind: Some(pb::the_gang_action::Kind::Guess(
                    pb::the_gang_action::Guess {
                        value: Some(pb::TheGangGuessValue {
                            value: Some(pb::the_gang_guess_value::Value::Category(category)),
                        }),
                    },
                )),
            })),
        };
        for seat in 0..3 {
            assert!(game.act(seat, &action).is_err(), "category {category}");
        }
        // The CLI's words for such an action do not panic either.
        let _ = gangs_games::describe_action(&action);
    }
}
