//! End to end, in headless Chromium: `gangs-server --grpc-web --cors-origin ORIGIN` lets a page
//! of another origin call the `Games` service directly. The page (served here, with the
//! hand-written client `tests/web/grpc_web.js`: protobuf and gRPC-Web framing over `fetch`)
//! creates a game, takes seat 0, watches its seat's updates (a server stream) and acts on them
//! while bot processes play the other seats; the server's log then holds the page's actions.
//! A preflight from an origin not named is not allowed; without `--grpc-web` the server does
//! not answer gRPC-Web at all.

use crate::common;
use crate::web;

use common::*;
use gangs_proto::v1 as pb;
use pb::log_record::Record;
use std::time::Duration;
use web::*;

const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>gRPC-Web</title>
<script src="/grpc_web.js"></script></head>
<body><h1>gangs over gRPC-Web</h1><ol id="log"></ol></body></html>"#;
const CLIENT: &str = include_str!("web/grpc_web.js");

/// Serves the page and its script on a free port; returns its origin.
async fn serve_page() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    |request: hyper::Request<hyper::body::Incoming>| async move {
                        let (body, kind) = match request.uri().path() {
                            "/grpc_web.js" => (CLIENT, "text/javascript"),
                            _ => (PAGE, "text/html; charset=utf-8"),
                        };
                        Ok::<_, hyper::Error>(
                            hyper::Response::builder()
                                .header("content-type", kind)
                                .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
                                .unwrap(),
                        )
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    origin
}

/// A CORS preflight for `Act` from `origin`: the allowed origin the server answers, if any.
async fn preflight(server: &Server, origin: &str) -> Option<String> {
    let (_, headers, _) = request(
        &format!("http://{}", server.addr),
        "OPTIONS",
        "/gangs.v1.Games/Act",
        &[
            ("origin", origin),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "content-type,x-grpc-web"),
        ],
        "",
    )
    .await;
    headers
        .get("access-control-allow-origin")
        .map(|v| v.to_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_creates_watches_and_acts_through_grpc_web() {
    let origin = serve_page().await;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        &dir.path().join("data"),
        0,
        &["--grpc-web", "--cors-origin", &origin],
    );
    assert_eq!(
        preflight(&server, &origin).await.as_deref(),
        Some(origin.as_str())
    );
    assert_eq!(preflight(&server, "http://evil.example").await, None);

    let browser = Browser::start().await;
    let grpc = format!("http://{}", server.addr);
    browser
        .client
        .goto(&format!("{origin}/?server={grpc}&acts=3"))
        .await
        .expect("open the page");
    browser
        .wait_until(
            "document.body.dataset.gameId || document.body.dataset.error",
            "the page created a game and took a seat",
        )
        .await;
    browser
        .wait_until(
            "document.body.dataset.seat !== undefined || document.body.dataset.error",
            "the page took a seat",
        )
        .await;
    let error = browser.eval("document.body.dataset.error || ''").await;
    assert_eq!(error, "", "the page failed");
    let game = browser.eval("document.body.dataset.gameId").await;
    let game = game.as_str().expect("a game id").to_string();
    // Bots take the other seats; the page acts whenever its seat may.
    let _bots: Vec<Bot> = (1..4u32)
        .map(|seat| spawn_bot("gangs-bot-random", &server, &game, Some(seat), seat as u64))
        .collect();
    for _ in 0..3 {
        // wait_until waits 20 s at most; a table of random bots takes a few turns per act.
        let done = async {
            loop {
                let acted = browser
                    .eval("Number(document.body.dataset.acted || 0)")
                    .await;
                let error = browser.eval("document.body.dataset.error || ''").await;
                assert_eq!(error, "", "the page failed");
                if acted.as_u64().unwrap_or(0) >= 3 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(40), done)
            .await
            .is_ok()
        {
            break;
        }
    }
    let acted = browser
        .eval("Number(document.body.dataset.acted || 0)")
        .await;
    assert_eq!(acted.as_u64(), Some(3), "the page acted three times");
    let seqs = browser.eval("document.body.dataset.actedSeqs").await;
    let seqs: Vec<u64> = seqs
        .as_str()
        .unwrap()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    browser.screenshot("grpc-web").await;
    browser.close().await;

    // The server's log holds the page's actions, by seat 0, at the seqs it was answered.
    let mut client = server.client().await;
    let records = log(&mut client, &game).await;
    for seq in &seqs {
        let record = records
            .iter()
            .find(|r| r.seq == *seq)
            .unwrap_or_else(|| panic!("no record {seq} in the log"));
        match &record.record {
            Some(Record::Acted(acted)) => assert_eq!(acted.seat, 0, "seq {seq}"),
            other => panic!("seq {seq} is not an action: {other:?}"),
        }
    }
    let joined = records
        .iter()
        .find_map(|r| match &r.record {
            Some(Record::Joined(j)) if j.seat == 0 => Some(j.name.clone()),
            _ => None,
        })
        .expect("seat 0 joined");
    assert_eq!(joined, "browser");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_grpc_web_the_server_speaks_only_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"));
    // An HTTP/1.1 gRPC-Web call, by hand: whatever comes back, it is not an answer.
    let answer = tokio::task::spawn_blocking({
        let addr = server.addr.clone();
        move || {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            stream
                .write_all(
                    b"POST /gangs.v1.Games/ListGames HTTP/1.1\r\nHost: x\r\ncontent-type: application/grpc-web+proto\r\nx-grpc-web: 1\r\ncontent-length: 5\r\n\r\n\0\0\0\0\0",
                )
                .unwrap();
            let mut answer = Vec::new();
            let _ = stream.read_to_end(&mut answer);
            String::from_utf8_lossy(&answer).into_owned()
        }
    })
    .await
    .unwrap();
    assert!(
        !answer.starts_with("HTTP/1.1 200"),
        "an HTTP/1.1 gRPC-Web call was answered: {answer}"
    );
    // And --cors-origin alone is refused at startup, naming --grpc-web.
    let output = std::process::Command::new(bin("gangs-server"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--cors-origin",
            "http://x.example",
        ])
        .arg("--data-dir")
        .arg(dir.path().join("other"))
        .output()
        .expect("run gangs-server");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--grpc-web"));
}
