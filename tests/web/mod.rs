//! Helpers for the web viewer's end-to-end tests: the server started with `--http`, a small
//! HTTP client (plain GETs and a server-sent-events reader), and headless Chromium driven over
//! WebDriver (chromedriver), with screenshots kept under `target/screenshots/`.

#![allow(dead_code)]

use crate::common::{bin, Server};
use http_body_util::{BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The server with its web viewer on a free port: (server, viewer base URL without the slash).
pub fn start_viewer(data_dir: &Path) -> (Server, String) {
    start_viewer_with(data_dir, &[])
}

/// As [`start_viewer`], with extra server flags.
pub fn start_viewer_with(data_dir: &Path, flags: &[&str]) -> (Server, String) {
    let mut child = Command::new(bin("gangs-server"))
        .args(flags)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(data_dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start gangs-server");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    let mut second = String::new();
    stdout.read_line(&mut first).expect("first line");
    stdout.read_line(&mut second).expect("second line");
    let addr = first
        .trim()
        .strip_prefix("gangs-server listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {first:?}"))
        .to_string();
    let http = second
        .trim()
        .strip_prefix("gangs-server web viewer on ")
        .unwrap_or_else(|| panic!("unexpected second line: {second:?}"))
        .trim_end_matches('/')
        .to_string();
    let server = Server {
        child,
        addr,
        data_dir: data_dir.to_path_buf(),
        flags: flags.iter().map(|f| f.to_string()).collect(),
        ca: None,
        stderr_log: None,
        env: Vec::new(),
    };
    (server, http)
}

async fn send(base: &str, path: &str, headers: &[(&str, &str)]) -> hyper::Response<Incoming> {
    let authority = base.strip_prefix("http://").expect("an http:// base");
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .expect("connect to the viewer");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .expect("http handshake");
    tokio::spawn(connection);
    let mut request = hyper::Request::get(path).header("host", authority);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    sender
        .send_request(request.body(Empty::<Bytes>::new()).unwrap())
        .await
        .expect("http request")
}

/// Any request: (status, headers, body as text).
pub async fn request(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, hyper::HeaderMap, String) {
    request_from(None, base, method, path, headers, body).await
}

/// As [`request`], from the loopback address `source` when given (127.0.0.2: another client).
pub async fn request_from(
    source: Option<std::net::Ipv4Addr>,
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, hyper::HeaderMap, String) {
    let authority = base.strip_prefix("http://").expect("an http:// base");
    let stream = match source {
        None => tokio::net::TcpStream::connect(authority).await,
        Some(source) => {
            let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
            socket
                .bind((source, 0).into())
                .expect("bind the source address");
            socket.connect(authority.parse().expect("an ip:port")).await
        }
    }
    .expect("connect to the viewer");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .expect("http handshake");
    tokio::spawn(connection);
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", authority);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = sender
        .send_request(
            request
                .body(http_body_util::Full::new(Bytes::from(body.to_string())))
                .unwrap(),
        )
        .await
        .expect("http request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        headers,
        String::from_utf8(body.to_vec()).expect("utf-8 body"),
    )
}

/// GET `path`: (status, body as text).
pub async fn get(base: &str, path: &str) -> (u16, String) {
    let response = send(base, path, &[]).await;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        String::from_utf8(body.to_vec()).expect("utf-8 body"),
    )
}

/// GET `path` as JSON, asserting a 200.
pub async fn get_json(base: &str, path: &str) -> serde_json::Value {
    let (status, body) = get(base, path).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: not JSON ({e}): {body}"))
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    pub event: String,
    pub id: Option<String>,
    pub data: String,
}

/// A server-sent-events stream read event by event.
pub struct SseStream {
    body: Incoming,
    buffer: String,
}

impl SseStream {
    pub async fn open(base: &str, path: &str, headers: &[(&str, &str)]) -> SseStream {
        let response = send(base, path, headers).await;
        assert_eq!(response.status(), 200, "GET {path}");
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "GET {path}"
        );
        SseStream {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The next event (keep-alive comments skipped); `None` when the stream ended.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    event: "message".into(),
                    id: None,
                    data: String::new(),
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event.event = v.trim().to_string();
                        any = true;
                    } else if let Some(v) = line.strip_prefix("id:") {
                        event.id = Some(v.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        if !event.data.is_empty() {
                            event.data.push('\n');
                        }
                        event.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                        any = true;
                    }
                }
                if any {
                    return Some(event);
                }
                continue;
            }
            let frame = tokio::time::timeout(Duration::from_secs(30), self.body.frame())
                .await
                .expect("an event within 30 s")?
                .expect("the event stream");
            if let Ok(data) = frame.into_data() {
                self.buffer
                    .push_str(std::str::from_utf8(&data).expect("utf-8"));
            }
        }
    }
}

/// Where the screenshots go: `target/screenshots/` (kept as CI artefacts).
pub fn screenshot_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/debug/deps/<test> -> target/
    let target = exe
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "target"))
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"));
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir).expect("create target/screenshots");
    dir
}

fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Headless Chromium under chromedriver, with a fresh profile. Fails (never skips) when either
/// is missing, saying how to install them.
pub struct Browser {
    pub client: fantoccini::Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub async fn start() -> Browser {
        const INSTALL: &str = "install them with `apt-get install -y chromium chromium-driver` \
                               (Debian; `bash .ci/run` does it)";
        let chromium = find_program(&["chromium", "chromium-browser", "google-chrome"])
            .unwrap_or_else(|| {
                panic!("the browser test needs Chromium, not found on PATH: {INSTALL}")
            });
        let chromedriver = find_program(&["chromedriver"]).unwrap_or_else(|| {
            panic!("the browser test needs chromedriver, not found on PATH: {INSTALL}")
        });
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let profile = tempfile::tempdir().expect("profile dir");
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1280,1500",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let url = format!("http://127.0.0.1:{port}");
        let mut last_error = String::new();
        for _ in 0..100 {
            match fantoccini::ClientBuilder::new(
                hyper_util::client::legacy::connect::HttpConnector::new(),
            )
            .capabilities(capabilities.clone())
            .connect(&url)
            .await
            {
                Ok(client) => {
                    return Browser {
                        client,
                        driver,
                        _profile: profile,
                    }
                }
                Err(e) => last_error = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("cannot start a Chromium session through chromedriver: {last_error}");
    }

    /// Opens `url` and waits until the page says it is drawn (`#app[data-state=ready]`).
    pub async fn open(&self, url: &str) {
        self.client.goto(url).await.expect("open the page");
        self.wait_until(
            "document.getElementById('app').dataset.state === 'ready'",
            url,
        )
        .await;
    }

    /// Waits until `condition` (a JavaScript expression) is true, for up to 20 s.
    pub async fn wait_until(&self, condition: &str, what: &str) {
        for _ in 0..400 {
            let value = self
                .client
                .execute(&format!("return !!({condition});"), vec![])
                .await
                .expect("run a script in the page");
            if value == serde_json::Value::Bool(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let state = self
            .eval("document.getElementById('app').innerText.slice(0, 500)")
            .await;
        panic!("waited 20 s for `{condition}` ({what}); the page shows: {state}");
    }

    /// The value of a JavaScript expression in the page.
    pub async fn eval(&self, expression: &str) -> serde_json::Value {
        self.client
            .execute(&format!("return ({expression});"), vec![])
            .await
            .unwrap_or_else(|e| panic!("evaluate `{expression}`: {e}"))
    }

    /// Presses keys on the page (WebDriver key codes, e.g. `fantoccini::key::Key::Right`).
    pub async fn press(&self, keys: &str) {
        let body = self
            .client
            .find(fantoccini::Locator::Css("body"))
            .await
            .expect("the page's body");
        body.send_keys(keys).await.expect("send keys");
    }

    /// Saves a screenshot as `target/screenshots/NAME.png`; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        // A script that appended an object instead of drawing it would show "[object ...]".
        let text = self.eval("document.body.innerText").await;
        assert!(
            !text.as_str().unwrap_or("").contains("[object"),
            "the page {name} shows an undrawn object: {text}"
        );
        let png = self.client.screenshot().await.expect("screenshot");
        let path = screenshot_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write the screenshot");
        path
    }

    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
