//! Pairing: which queued bots play together. Pure: the ladder hands it the candidates (entries
//! with a Queue stream open and a free game slot) and gets groups of `players` entries back.
//!
//! Each group is built around an *anchor*, the candidate with the highest σ (the least known;
//! ties: the one that waited longest), joined by the candidates closest to it in μ measured in
//! units of their combined uncertainty (`|μa − μc| / sqrt(σa² + σc²)`). A new bot (high σ)
//! therefore gets games at once and, looking close to everyone, meets everyone; established
//! bots meet their peers. An entry appears at most once in a group (never the same bot version
//! twice at one table) and in as many groups as it has free slots.
//!
//! A team game (The Gang: the crew against the game) has no opponents to match, only partners,
//! and partners always the same would make each bot's record its partners' luck. There
//! ([`make_crews`]) each crew is built around the candidate that waited longest, joined one by
//! one by the candidate that has played least with those already in (counting every match the
//! ladder made), ties broken by a seeded shuffle: over a few hundred games every pair of active
//! bots plays together, and the same seed and history give the same crews.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::HashMap;

/// Games two entries played together, keyed by the pair (lower index first).
pub type Together = HashMap<(usize, usize), u32>;

/// The key of the pair `a`, `b` in [`Together`].
pub fn pair(a: usize, b: usize) -> (usize, usize) {
    (a.min(b), a.max(b))
}

/// One entry that may be matched now.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The entry's index in the ladder.
    pub entry: usize,
    pub mu: f64,
    pub sigma: f64,
    /// Games it may still start now (its max_concurrent less the games it plays).
    pub free_slots: u32,
    /// When it last started waiting (unix ms): the longer, the sooner it is picked.
    pub waiting_since: i64,
}

/// Most groups made in one round: bounds one round's work; the next round makes the rest.
pub const MAX_GROUPS_PER_ROUND: usize = 256;

/// Groups of `players` distinct entries (the anchor first), as many as the candidates allow.
pub fn make_groups(mut candidates: Vec<Candidate>, players: usize) -> Vec<Vec<usize>> {
    let mut groups = Vec::new();
    if players == 0 {
        return groups;
    }
    candidates.retain(|c| c.free_slots > 0);
    while candidates.len() >= players && groups.len() < MAX_GROUPS_PER_ROUND {
        let anchor = (0..candidates.len())
            .max_by(|&a, &b| {
                let (a, b) = (&candidates[a], &candidates[b]);
                a.sigma
                    .total_cmp(&b.sigma)
                    .then(b.waiting_since.cmp(&a.waiting_since))
                    .then(b.entry.cmp(&a.entry))
            })
            .expect("not empty");
        let a = candidates[anchor].clone();
        let mut others: Vec<usize> = (0..candidates.len()).filter(|&i| i != anchor).collect();
        let distance = |c: &Candidate| {
            (a.mu - c.mu).abs() / (a.sigma * a.sigma + c.sigma * c.sigma).sqrt().max(1e-9)
        };
        others.sort_by(|&x, &y| {
            let (x, y) = (&candidates[x], &candidates[y]);
            distance(x)
                .total_cmp(&distance(y))
                .then(x.waiting_since.cmp(&y.waiting_since))
                .then(x.entry.cmp(&y.entry))
        });
        let mut members = vec![anchor];
        members.extend(others.into_iter().take(players - 1));
        groups.push(members.iter().map(|&i| candidates[i].entry).collect());
        for &i in &members {
            candidates[i].free_slots -= 1;
        }
        candidates.retain(|c| c.free_slots > 0);
    }
    groups
}

/// Crews of `players` distinct entries for a team game, rotating partners: see the module's
/// comment. `together` is the ladder's count of games per pair so far; `seed` decides ties.
pub fn make_crews(
    mut candidates: Vec<Candidate>,
    players: usize,
    together: &Together,
    seed: u64,
) -> Vec<Vec<usize>> {
    let mut groups = Vec::new();
    if players == 0 {
        return groups;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    // The crews made by this call count too, so that the crews of one matching differ.
    let mut round: Together = HashMap::new();
    let count = |round: &Together, a: usize, b: usize| {
        together.get(&pair(a, b)).copied().unwrap_or(0)
            + round.get(&pair(a, b)).copied().unwrap_or(0)
    };
    candidates.retain(|c| c.free_slots > 0);
    candidates.sort_by_key(|c| c.entry);
    while candidates.len() >= players && groups.len() < MAX_GROUPS_PER_ROUND {
        // A fresh seeded order for each crew breaks every tie.
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.shuffle(&mut rng);
        let mut rank = vec![0; candidates.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r;
        }
        let anchor = (0..candidates.len())
            .min_by_key(|&i| (candidates[i].waiting_since, rank[i]))
            .expect("not empty");
        let mut members = vec![anchor];
        while members.len() < players {
            let next = (0..candidates.len())
                .filter(|i| !members.contains(i))
                .min_by_key(|&i| {
                    let with: u32 = members
                        .iter()
                        .map(|&m| count(&round, candidates[m].entry, candidates[i].entry))
                        .sum();
                    (with, rank[i])
                })
                .expect("enough candidates");
            members.push(next);
        }
        let entries: Vec<usize> = members.iter().map(|&i| candidates[i].entry).collect();
        for (k, &a) in entries.iter().enumerate() {
            for &b in &entries[k + 1..] {
                *round.entry(pair(a, b)).or_default() += 1;
            }
        }
        groups.push(entries);
        for &i in &members {
            candidates[i].free_slots -= 1;
        }
        candidates.retain(|c| c.free_slots > 0);
    }
    groups
}

/// The seats of game `game` of match `match_no`: the group's entries rotated by both, so that
/// every entry sits in every seat over its matches (and, in a duplicate match, over its games).
pub fn seating(group: &[usize], match_no: u64, game: usize) -> Vec<usize> {
    let n = group.len();
    if n == 0 {
        return Vec::new();
    }
    let shift = (match_no as usize).wrapping_add(game) % n;
    (0..n).map(|seat| group[(seat + shift) % n]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(entry: usize, mu: f64, sigma: f64, free_slots: u32) -> Candidate {
        Candidate {
            entry,
            mu,
            sigma,
            free_slots,
            waiting_since: entry as i64,
        }
    }

    #[test]
    fn no_group_without_enough_distinct_entries() {
        // One entry with many slots is never seated twice at one table.
        assert!(make_groups(vec![c(0, 25.0, 8.0, 10)], 2).is_empty());
        let three = vec![c(0, 25.0, 8.0, 4), c(1, 25.0, 8.0, 4), c(2, 25.0, 8.0, 4)];
        assert!(make_groups(three, 4).is_empty());
    }

    #[test]
    fn groups_hold_distinct_entries_and_use_every_free_slot() {
        let candidates = (0..5).map(|i| c(i, 25.0, 8.0, 2)).collect();
        let groups = make_groups(candidates, 4);
        assert_eq!(groups.len(), 2, "{groups:?}");
        let mut per_entry = [0; 5];
        for group in &groups {
            let mut sorted = group.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), 4, "an entry twice in {group:?}");
            for &e in group {
                per_entry[e] += 1;
            }
        }
        assert!(per_entry.iter().all(|&n| n <= 2), "{per_entry:?}");
    }

    #[test]
    fn the_newest_bot_anchors_and_meets_the_closest_peers() {
        let candidates = vec![
            c(0, 40.0, 1.0, 1),
            c(1, 10.0, 1.0, 1),
            c(2, 26.0, 1.0, 1),
            c(3, 25.0, 8.3, 1),
            c(4, 24.0, 1.0, 1),
        ];
        let groups = make_groups(candidates, 3);
        assert_eq!(groups, vec![vec![3, 2, 4]]);
    }

    #[test]
    fn established_bots_meet_their_peers() {
        let candidates = vec![
            c(0, 40.0, 1.0, 1),
            c(1, 10.0, 1.0, 1),
            c(2, 39.0, 1.0, 1),
            c(3, 11.0, 1.1, 1),
        ];
        let groups = make_groups(candidates, 2);
        assert_eq!(groups.len(), 2);
        let mut pairs: Vec<Vec<usize>> = groups
            .into_iter()
            .map(|mut g| {
                g.sort();
                g
            })
            .collect();
        pairs.sort();
        assert_eq!(pairs, vec![vec![0, 2], vec![1, 3]]);
    }

    #[test]
    fn crews_rotate_so_that_every_pair_plays_together() {
        // Six entries, crews of three, one crew at a time (as a ladder of one-slot bots).
        let mut together = Together::new();
        let mut clock = 0;
        let mut waiting: Vec<i64> = vec![0; 6];
        let mut crews = Vec::new();
        for round in 0..60u64 {
            let candidates: Vec<Candidate> = (0..6)
                .map(|e| Candidate {
                    waiting_since: waiting[e],
                    ..c(e, 25.0, 8.0, 1)
                })
                .collect();
            for crew in make_crews(candidates, 3, &together, round) {
                clock += 1;
                for (k, &a) in crew.iter().enumerate() {
                    waiting[a] = clock;
                    for &b in &crew[k + 1..] {
                        *together.entry(pair(a, b)).or_default() += 1;
                    }
                }
                crews.push(crew);
            }
        }
        assert_eq!(crews.len(), 120, "two crews a round");
        // Every one of the 15 pairs played together, and about as often.
        assert_eq!(together.len(), 15, "{together:?}");
        let (least, most) = (
            together.values().min().copied().unwrap(),
            together.values().max().copied().unwrap(),
        );
        assert!(least * 2 >= most, "{together:?}");
        // Seeded: the same history and seed give the same crews.
        let candidates: Vec<Candidate> = (0..6).map(|e| c(e, 25.0, 8.0, 1)).collect();
        assert_eq!(
            make_crews(candidates.clone(), 3, &together, 9),
            make_crews(candidates, 3, &together, 9)
        );
    }

    #[test]
    fn seats_rotate_with_the_match_and_the_game() {
        let group = [7, 8, 9, 10];
        assert_eq!(seating(&group, 0, 0), vec![7, 8, 9, 10]);
        assert_eq!(seating(&group, 1, 0), vec![8, 9, 10, 7]);
        assert_eq!(seating(&group, 0, 3), vec![10, 7, 8, 9]);
        // Over a duplicate match every entry sits in every seat once.
        for seat in 0..4 {
            let mut at_seat: Vec<usize> = (0..4).map(|g| seating(&group, 5, g)[seat]).collect();
            at_seat.sort();
            assert_eq!(at_seat, group.to_vec());
        }
    }
}
