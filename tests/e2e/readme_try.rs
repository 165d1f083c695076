//! The README's "Try it" commands, run as written (issue 55): every `sh` block of the section,
//! from a fresh data dir, against a started `engage serve`; each answer is compared with the
//! `# …` lines the README prints under its command, so the README cannot drift from what engage
//! answers. Dates and times are masked (`2026-11-21`, `10:00:00.123`), `...` and `…` stand for
//! anything, and text after two spaces on a `#` line is the README's prose, not output.
//!
//! Run as written, except: `localhost:8080` is the test's server, `cargo run --release [-q] --`
//! is the built binary, `pip install` lines are left out (scripts/test.sh installs the same
//! packages), and so are commands that never end (`--follow`, ended by Ctrl-C in the README;
//! `logs_tail.rs` follows) and those that need `jq` when it is not installed.

use std::path::Path;
use std::process::Command;

use crate::procs::{as_a_user, free_port, Engage, BIN};

/// One command of a block and the output lines the README shows under it.
#[derive(Debug)]
struct Step {
    command: String,
    expected: Vec<String>,
}

/// The `sh` blocks of README's "## Try it", up to its cluster sections.
fn try_it_blocks(readme: &str) -> Vec<Vec<String>> {
    let start = readme.find("\n## Try it").expect("README has ## Try it");
    let rest = &readme[start + 1..];
    let end = rest.find("\n### Getting `nats-server`").or_else(|| rest[3..].find("\n## ").map(|i| i + 3));
    let section = &rest[..end.unwrap_or(rest.len())];
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in section.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```sh") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), _) => block.push(line.to_owned()),
            _ => {}
        }
    }
    blocks
}

/// A block's commands (a command runs on while its quotes are open or a line ends in `\`), each
/// with the `#` lines right under it.
fn steps(block: &[String]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut command = String::new();
    for line in block {
        let open = !command.is_empty();
        if !open && line.trim_start().starts_with('#') {
            if let Some(step) = steps.last_mut() {
                step.expected.push(line.trim_start()[1..].to_owned());
            }
            continue;
        }
        if !open && line.trim().is_empty() {
            continue;
        }
        command.push_str(line);
        command.push('\n');
        let quotes = command.matches('\'').count();
        if quotes.is_multiple_of(2) && !line.ends_with('\\') {
            steps.push(Step { command: std::mem::take(&mut command), expected: Vec::new() });
        }
    }
    steps
}

/// The output a README `#` line shows: text after two spaces is prose; a line that starts with
/// spaces or `(` is prose; `...` alone says nothing.
fn shown(line: &str) -> Option<String> {
    if line.starts_with("  ") || line.trim_start().starts_with('(') {
        return None;
    }
    let mut text = line.trim_start();
    // prose after two spaces starts with `(` or a lower-case word; output (`{`, `HTTP/1.1`) goes on
    let mut from = 0;
    while let Some(at) = text[from..].find("  ") {
        let gap = from + at;
        let next = text[gap..].trim_start();
        if next.starts_with('(') || next.starts_with(|c: char| c.is_ascii_lowercase()) {
            text = &text[..gap];
            break;
        }
        from = gap + 2;
    }
    let text = text.trim();
    (!text.is_empty() && text != "..." && !text.starts_with("Ctrl")).then(|| text.to_owned())
}

/// Dates as `D`, times as `T` (digits of a date or a time, whatever they are).
fn masked(text: &str) -> String {
    let bytes = text.as_bytes();
    // whether `shape` starts at `at`: `9` a digit, any other byte itself
    let fits = |at: usize, shape: &[u8]| {
        bytes.len() >= at + shape.len()
            && shape.iter().zip(&bytes[at..]).all(|(s, b)| if *s == b'9' { b.is_ascii_digit() } else { s == b })
    };
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if fits(i, b"9999-99-99") {
            out.push('D');
            i += 10;
        } else if fits(i, b"99:99:99") {
            out.push('T');
            i += 8;
            if bytes.get(i) == Some(&b'.') {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
            }
        } else {
            let c = text[i..].chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    out
}

/// Whether `output` shows `expected`: its pieces between `...` (or `…`), in order.
fn matches(output: &str, expected: &str) -> bool {
    let (output, expected) = (masked(output), masked(expected).replace('…', "..."));
    let mut at = 0;
    for piece in expected.split("...").filter(|p| !p.trim().is_empty()) {
        match output[at..].find(piece.trim()) {
            Some(found) => at += found + piece.trim().len(),
            None => return false,
        }
    }
    true
}

/// What runs instead of a README line, or None to leave it out.
fn as_run(command: &str, base: &str, jq: bool) -> Option<String> {
    if command.contains("pip install") || command.contains("--follow") || (command.contains("| jq") && !jq) {
        return None;
    }
    let command = command
        .replace("http://localhost:8080", base)
        .replace("localhost:8080", base.trim_start_matches("http://"))
        .replace("cargo run --release -q --", BIN)
        .replace("cargo run --release --", BIN);
    Some(command)
}

#[tokio::test]
async fn the_readme_try_it_commands_answer_as_printed() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(Path::new(root).join("README.md")).unwrap();
    let blocks = try_it_blocks(&readme);
    assert!(blocks.len() >= 4, "the Try it blocks: {blocks:#?}");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = free_port();
    let engage = Engage::start(&data, port, &[]).await;
    let jq = Command::new("jq").arg("--version").output().is_ok_and(|o| o.status.success());
    // one shell for the whole section, as a reader pastes it block after block: variables
    // ($TOKEN, $STAFF) carry on; each command's output ends at a marker line
    let all: Vec<Step> = blocks.iter().flat_map(|block| steps(block)).collect();
    let mut script = String::from("cd \"$WORK\" && ln -sfn \"$ROOT/examples\" examples\n");
    let mut kept = Vec::new();
    for (n, step) in all.iter().enumerate() {
        let Some(command) = as_run(&step.command, &engage.base, jq) else { continue };
        script.push_str(&command);
        script.push_str(&format!("\necho; echo '@@{n}@@'\n"));
        kept.push(n);
    }
    let work = dir.path().to_owned();
    let data_dir = data.clone();
    let output = tokio::task::spawn_blocking(move || {
        let mut shell = Command::new("bash");
        shell.arg("-c").arg(&script).current_dir(root).env("WORK", &work).env("ROOT", root);
        as_a_user(&mut shell)
            .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("ENGAGE_DATA_DIR", &data_dir)
            .env("SERVER", format!("http://127.0.0.1:{port}"))
            .env("ENGAGE", BIN)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let here = |text: String| {
        text.replace("http://localhost:8080", &engage.base)
            .replace("localhost:8080", engage.base.trim_start_matches("http://"))
    };
    let (mut compared, mut ran) = (0, 0);
    let mut rest = stdout.as_str();
    for n in kept {
        let marker = format!("@@{n}@@");
        let (said, after) = rest.split_once(&marker).unwrap_or_else(|| {
            panic!("README command never finished:\n{}\nstdout: {stdout}\nstderr: {stderr}", all[n].command)
        });
        rest = after;
        ran += 1;
        for expected in all[n].expected.iter().filter_map(|line| shown(line)).map(here) {
            compared += 1;
            assert!(
                matches(said, &expected),
                "README command:\n{}\nprints under it:\n# {expected}\nbut it answered:\n{said}\nstderr: {stderr}",
                all[n].command
            );
        }
    }
    assert!(ran >= 15 && compared >= 10, "{ran} commands run, {compared} answers compared");
}

#[test]
fn the_readme_matcher_masks_dates_and_reads_ellipses() {
    assert!(matches(
        r#"{"events":[{"log_stream":"api/2027-01-02","timestamp":1}]}"#,
        r#"{"events":[{"log_stream":"api/2026-11-21","timestamp":...}]}"#
    ));
    assert!(matches("HTTP/1.1 200 OK\r\nx: y\r\n\r\n{\"accepted\":1}", "HTTP/1.1 200 OK ... {\"accepted\":1}"));
    assert!(!matches("{\"accepted\":0}", "{\"accepted\":1}"));
    assert_eq!(
        shown(r#"{"status":1}      (the same refundId again changes nothing)"#).as_deref(),
        Some(r#"{"status":1}"#)
    );
    assert_eq!(shown("                  and /stats counts it"), None);
    assert_eq!(shown(" {\"status\":1}      the whole order: total_orders 1").as_deref(), Some("{\"status\":1}"));
    assert_eq!(
        shown(" HTTP/1.1 400 Bad Request ...  {\"error\":1}").as_deref(),
        Some("HTTP/1.1 400 Bad Request ...  {\"error\":1}")
    );
    let block: Vec<String> =
        ["A=$(x)", "curl -d '{", "  \"a\": 1}'", "# {\"ok\":1}", "# more"].map(String::from).to_vec();
    let steps = steps(&block);
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(steps[1].expected, vec![" {\"ok\":1}".to_owned(), " more".to_owned()]);
}
