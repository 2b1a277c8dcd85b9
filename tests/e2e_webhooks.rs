//! End to end: webhooks (`--webhook URL --webhook-secret S`) to a receiver on loopback. A
//! cancelled game and an abandoned one (`--fill-timeout`) are POSTed once each, signed
//! (checked here with HMAC-SHA256 computed independently), with a stable event id. With the
//! receiver down, the server retries; SIGKILLed and restarted while the receiver is still down,
//! it delivers the event once the receiver is back: nothing is lost. The metrics count the
//! deliveries and the failures; `gangs webhook test` sends a signed sample. A ladder's rated
//! game is POSTed as a `ladder.result` (the ladder, the game, names, outcome, ratings).

use crate::common;

use common::observe::read_metric;
use common::*;
use gangs_proto::v1 as pb;
use http_body_util::BodyExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const SECRET: &str = "whsec-test-1234";
const WAIT: Duration = Duration::from_secs(60);

/// One POST the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) signature: String,
    pub(crate) event_id: String,
    pub(crate) body: Vec<u8>,
    /// What the receiver answered.
    pub(crate) accepted: bool,
}

/// A webhook receiver on loopback: records every POST; answers 200 when up, 503 when down
/// (also used by the cluster's tests, `e2e_nats_directory.rs`).
pub(crate) struct Receiver {
    pub(crate) url: String,
    got: Arc<Mutex<Vec<Received>>>,
    pub(crate) up: Arc<AtomicBool>,
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks/gangs", listener.local_addr().unwrap());
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let up = Arc::new(AtomicBool::new(true));
        let (got2, up2) = (got.clone(), up.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (got, up) = (got2.clone(), up2.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |request: hyper::Request<hyper::body::Incoming>| {
                            let (got, up) = (got.clone(), up.clone());
                            async move {
                                let header = |name: &str| {
                                    request
                                        .headers()
                                        .get(name)
                                        .and_then(|v| v.to_str().ok())
                                        .unwrap_or("")
                                        .to_string()
                                };
                                let (signature, event_id) =
                                    (header("gangs-signature"), header("gangs-event-id"));
                                let body = request.into_body().collect().await?.to_bytes().to_vec();
                                let accepted = up.load(Ordering::SeqCst);
                                got.lock().unwrap().push(Received {
                                    signature,
                                    event_id,
                                    body,
                                    accepted,
                                });
                                let status = if accepted { 200 } else { 503 };
                                Ok::<_, hyper::Error>(
                                    hyper::Response::builder()
                                        .status(status)
                                        .body(http_body_util::Full::new(hyper::body::Bytes::new()))
                                        .unwrap(),
                                )
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Receiver { url, got, up }
    }

    pub(crate) fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Waits until `check` holds over what was received.
    pub(crate) async fn wait_for(
        &self,
        what: &str,
        check: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let start = Instant::now();
        loop {
            let got = self.got();
            if check(&got) {
                return got;
            }
            assert!(
                start.elapsed() < WAIT,
                "the receiver never got {what}: {got:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The signature checked as a receiver would, with ring's HMAC (not the crate's own helper).
pub(crate) fn signed(received: &Received) -> bool {
    let mut timestamp = "";
    let mut tag = "";
    for part in received.signature.split(',') {
        match part.split_once('=') {
            Some(("t", t)) => timestamp = t,
            Some(("v1", v)) => tag = v,
            _ => {}
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let fresh = timestamp
        .parse::<u64>()
        .is_ok_and(|t| t.abs_diff(now) < 300);
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    let mut message = timestamp.as_bytes().to_vec();
    message.push(b'.');
    message.extend_from_slice(&received.body);
    let expected: String = ring::hmac::sign(&key, &message)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    fresh && tag == expected
}

pub(crate) fn json(received: &Received) -> serde_json::Value {
    serde_json::from_slice(&received.body).expect("a JSON body")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_signed_retried_and_survive_a_restart_while_the_receiver_is_down() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let metrics_port = free_port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let mut server = Server::start_with(
        &dir.path().join("data"),
        0,
        &[
            "--webhook",
            &receiver.url,
            "--webhook-secret",
            SECRET,
            "--fill-timeout",
            "2s",
            "--metrics",
            &metrics,
        ],
    );
    let mut client = server.client().await;

    // A game nobody joins (abandoned after --fill-timeout) and a cancelled one.
    let abandoned = create(&mut client, "gang-of-four", None, 3).await;
    let cancelled = create(&mut client, "gang-of-four", None, 1).await;
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: cancelled.clone(),
            reason: "rained off".into(),
        })
        .await
        .expect("cancel");
    let got = receiver
        .wait_for("the cancelled game", |got| {
            got.iter().any(|r| json(r)["game_id"] == cancelled.as_str())
        })
        .await;
    let first = got
        .iter()
        .find(|r| json(r)["game_id"] == cancelled.as_str())
        .unwrap();
    assert!(signed(first), "a valid signature: {first:?}");
    let body = json(first);
    assert_eq!(body["type"], "game.cancelled");
    assert_eq!(body["reason"], "rained off");
    assert_eq!(body["id"], first.event_id.as_str());
    assert_eq!(body["summary"]["status"], "GAME_STATUS_CANCELLED");
    // The one nobody joined is abandoned after --fill-timeout: its own event.
    let got = receiver
        .wait_for("the abandoned game", |got| {
            got.iter().any(|r| json(r)["type"] == "game.abandoned")
        })
        .await;
    let gone = got
        .iter()
        .find(|r| json(r)["type"] == "game.abandoned")
        .unwrap();
    assert_eq!(json(gone)["game_id"], abandoned.as_str());
    assert!(got.iter().all(signed));
    assert_eq!(
        got.iter()
            .filter(|r| json(r)["type"] == "game.cancelled")
            .count(),
        1,
        "delivered once"
    );
    // Counted once the receiver's answer is back at the server, which may be just after the
    // receiver handed the bodies to this test.
    let counted = Instant::now();
    loop {
        let delivered = read_metric(metrics_port, "gangs_webhook_delivered_total");
        if delivered >= 2.0 {
            break;
        }
        assert!(
            counted.elapsed() < Duration::from_secs(10),
            "delivered: {delivered}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The receiver goes down: the next event is retried...
    receiver.up.store(false, Ordering::SeqCst);
    let during = create(&mut client, "the-gang", None, 2).await;
    client
        .cancel_game(pb::CancelGameRequest {
            game_id: during.clone(),
            reason: "receiver down".into(),
        })
        .await
        .expect("cancel");
    let refused_for = |got: &[Received]| {
        got.iter()
            .filter(|r| json(r)["game_id"] == during.as_str() && !r.accepted)
            .count()
    };
    receiver
        .wait_for("two refused attempts", |got| refused_for(got) >= 2)
        .await;
    assert!(read_metric(metrics_port, "gangs_webhook_failed_total") >= 2.0);
    // ... the server is killed and restarted while the receiver is still down ...
    server.restart();
    let before = refused_for(&receiver.got());
    receiver
        .wait_for("an attempt from the restarted server", |got| {
            refused_for(got) > before
        })
        .await;
    // ... and the event is delivered once the receiver is back, with the same id.
    receiver.up.store(true, Ordering::SeqCst);
    let got = receiver
        .wait_for("the event kept across the restart", |got| {
            got.iter()
                .any(|r| json(r)["game_id"] == during.as_str() && r.accepted)
        })
        .await;
    let attempts: Vec<&Received> = got
        .iter()
        .filter(|r| json(r)["game_id"] == during.as_str())
        .collect();
    assert!(attempts.iter().all(|r| signed(r)));
    assert!(
        attempts.iter().all(|r| r.event_id == attempts[0].event_id),
        "one event id across retries and the restart"
    );
    // Nothing before it was sent again after the restart (its mark was saved).
    assert_eq!(
        got.iter()
            .filter(|r| json(r)["game_id"] == cancelled.as_str())
            .count(),
        1
    );

    // `gangs webhook test` sends a signed sample.
    let output = std::process::Command::new(bin("gangs"))
        .args([
            "webhook",
            "test",
            "--url",
            &receiver.url,
            "--secret",
            SECRET,
        ])
        .output()
        .expect("gangs webhook test");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let got = receiver
        .wait_for("the test event", |got| {
            got.iter().any(|r| json(r)["type"] == "test")
        })
        .await;
    let sample = got.iter().find(|r| json(r)["type"] == "test").unwrap();
    assert!(signed(sample));
    // A receiver that refuses: the command says so.
    receiver.up.store(false, Ordering::SeqCst);
    let output = std::process::Command::new(bin("gangs"))
        .args([
            "webhook",
            "test",
            "--url",
            &receiver.url,
            "--secret",
            SECRET,
        ])
        .output()
        .expect("gangs webhook test");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("503"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_ladder_result_is_posted() {
    use crate::e2e_ladder::{create_ladder, json as cli_json, ladder_bot, register, LADDER};
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        0,
        &["--webhook", &receiver.url, "--webhook-secret", SECRET],
    );
    let (code, out) = create_ladder(
        &server,
        "gang-of-four",
        &["--option", "target_score=1", "--json"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(cli_json(&out)["name"], LADDER);
    let names = ["a", "b", "c", "d"];
    let bots: Vec<Bot> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let key = register(&server, name);
            ladder_bot("gangs-bot-random", &server, &key, Some(1), i as u64)
        })
        .collect();
    let got = receiver
        .wait_for("a ladder result", |got| {
            got.iter().any(|r| json(r)["type"] == "ladder.result")
        })
        .await;
    drop(bots);
    let result = got
        .iter()
        .find(|r| json(r)["type"] == "ladder.result")
        .unwrap();
    assert!(signed(result), "{result:?}");
    let body = json(result);
    assert_eq!(body["ladder"], LADDER);
    let ladder_id = body["ladder_id"].as_str().unwrap();
    assert!(
        ladder_id.starts_with("ladder") && ladder_id.len() == 16,
        "{ladder_id}"
    );
    assert_eq!(body["kind"], "gang-of-four");
    assert_eq!(body["id"], result.event_id.as_str());
    assert_eq!(body["void"], false);
    let mut seated: Vec<String> = body["names"]
        .as_array()
        .expect("names")
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    seated.sort();
    assert_eq!(seated, ["a@1", "b@1", "c@1", "d@1"]);
    assert_eq!(body["outcome"]["seats"].as_array().map(Vec::len), Some(4));
    let mut rated: Vec<String> = body["ratings_after"]
        .as_array()
        .expect("ratings_after")
        .iter()
        .map(|r| {
            assert!(
                r["mu"].as_f64().is_some() && r["sigma"].as_f64().is_some(),
                "{r}"
            );
            r["entry"].as_str().unwrap().to_string()
        })
        .collect();
    rated.sort();
    assert_eq!(rated, seated, "a rating for each entry, named");
    // The game's own end came too (a ladder game is a game).
    let game_id = body["game_id"].as_str().unwrap().to_string();
    receiver
        .wait_for("the ladder game's end", |got| {
            got.iter().any(|r| {
                json(r)["type"] == "game.finished" && json(r)["game_id"] == game_id.as_str()
            })
        })
        .await;
}
