//! Processes the binary tests start: `nats-server -js` (binary from `ENGAGE_TEST_NATS_SERVER`,
//! set by `scripts/test.sh`), alone or three in a cluster, and `engage serve`, each stopped on
//! drop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::required_env;

/// The `engage` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_engage");

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A nats-server with JetStream, stopped on drop.
pub struct NatsServer {
    child: Child,
    /// `nats://127.0.0.1:PORT`.
    pub url: String,
    port: u16,
    dir: tempfile::TempDir,
}

impl NatsServer {
    /// Starts one on a free port.
    pub async fn start() -> Self {
        Self::start_on(free_port()).await
    }

    /// Starts one on `port`.
    pub async fn start_on(port: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let child = Self::spawn(port, dir.path()).await;
        Self { child, url: format!("nats://127.0.0.1:{port}"), port, dir }
    }

    /// Kills it (SIGKILL) and starts it again on the same port and store directory after `down`.
    pub async fn restart_after(&mut self, down: Duration) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        tokio::time::sleep(down).await;
        self.child = Self::spawn(self.port, self.dir.path()).await;
    }

    async fn spawn(port: u16, dir: &Path) -> Child {
        let binary = required_env("ENGAGE_TEST_NATS_SERVER");
        let child = Command::new(binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        child
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three nats-servers with JetStream, routed into one cluster on loopback (server names `n0`,
/// `n1`, `n2`), each stopped on drop.
pub struct NatsCluster {
    children: Vec<Option<Child>>,
    /// Client ports, by server.
    pub ports: Vec<u16>,
    cluster_ports: Vec<u16>,
    dirs: Vec<tempfile::TempDir>,
}

impl NatsCluster {
    /// Starts the three servers and waits until they answer on their client ports.
    pub async fn start() -> Self {
        let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let cluster_ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let mut cluster = Self { children: vec![None, None, None], ports, cluster_ports, dirs };
        for server in 0..3 {
            cluster.start_server(server).await;
        }
        cluster
    }

    /// Starts the three servers and waits until every one is a member of JetStream's meta group,
    /// so a stream of three replicas can be made (before that, losing one server of a group that
    /// knows only two stops JetStream): (the cluster, its URLs, a client of all three).
    pub async fn formed() -> (Self, String, async_nats::jetstream::Context) {
        let cluster = Self::start().await;
        let urls = cluster.urls();
        let servers: Vec<String> = urls.split(',').map(str::to_owned).collect();
        let js = async_nats::jetstream::new(async_nats::ConnectOptions::new().connect(servers).await.unwrap());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let made = js
                .create_stream(async_nats::jetstream::stream::Config {
                    name: "FORMED".to_owned(),
                    subjects: vec!["formed".to_owned()],
                    num_replicas: 3,
                    ..Default::default()
                })
                .await;
            if made.is_ok() {
                break;
            }
            assert!(Instant::now() < deadline, "the cluster never took a stream of three replicas: {made:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        settled(&js, "FORMED", Duration::from_secs(30)).await;
        js.delete_stream("FORMED").await.unwrap();
        (cluster, urls, js)
    }

    /// `nats://…` of every server, comma-separated: an `ENGAGE_NATS_URL`.
    pub fn urls(&self) -> String {
        self.ports.iter().map(|p| format!("nats://127.0.0.1:{p}")).collect::<Vec<_>>().join(",")
    }

    /// The index of the server named `name` (`n1` -> 1).
    pub fn index_of(name: &str) -> usize {
        name.trim_start_matches('n').parse().unwrap()
    }

    /// SIGKILL of server `server`.
    pub fn kill(&mut self, server: usize) {
        if let Some(mut child) = self.children[server].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts server `server` (again, on its ports and store directory).
    pub async fn start_server(&mut self, server: usize) {
        let binary = required_env("ENGAGE_TEST_NATS_SERVER");
        let routes = self
            .cluster_ports
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != server)
            .map(|(_, p)| format!("nats://127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        let port = self.ports[server];
        let child = Command::new(binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-n", &format!("n{server}")])
            .args([
                "--cluster_name",
                "engage",
                "--cluster",
                &format!("nats://127.0.0.1:{}", self.cluster_ports[server]),
            ])
            .args(["--routes", &routes, "-sd"])
            .arg(self.dirs[server].path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        self.children[server] = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(Instant::now() < deadline, "nats-server n{server} did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for server in 0..3 {
            self.kill(server);
        }
    }
}

/// A stream's cluster info, once it has a leader and every replica is current.
pub async fn settled(
    js: &async_nats::jetstream::Context,
    name: &str,
    within: Duration,
) -> async_nats::jetstream::stream::ClusterInfo {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(mut stream) = js.get_stream(name).await {
            if let Ok(info) = stream.info().await {
                if let Some(cluster) = info.cluster.clone() {
                    if cluster.leader.is_some() && cluster.replicas.iter().all(|r| r.current && !r.offline) {
                        return cluster;
                    }
                }
            }
        }
        assert!(Instant::now() < deadline, "stream {name} never settled with a leader and current replicas");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// One engage process.
pub struct Engage {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Its port.
    pub port: u16,
    /// Where its stderr goes.
    pub log: PathBuf,
}

impl Engage {
    /// Starts `engage serve` and waits until `/readyz` answers 200.
    pub async fn start(data_dir: &Path, port: u16, env: &[(&str, &str)]) -> Self {
        let engage = Self::spawn(data_dir, port, env);
        engage.wait_ready(Duration::from_secs(30)).await;
        engage
    }

    /// Starts `engage serve` without waiting; stderr goes to `<data_dir>.<port>.log`.
    pub fn spawn(data_dir: &Path, port: u16, env: &[(&str, &str)]) -> Self {
        let path = data_dir.with_extension(format!("{port}.log"));
        let log = std::fs::File::create(&path).unwrap();
        let mut command = Command::new(BIN);
        command
            .arg("serve")
            .env("ENGAGE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("ENGAGE_DATA_DIR", data_dir)
            .env("ENGAGE_LOG_LEVEL", "info")
            .stdout(Stdio::null())
            .stderr(log);
        for (name, value) in env {
            command.env(name, value);
        }
        let child = command.spawn().unwrap();
        Self { child, base: format!("http://127.0.0.1:{port}"), port, log: path }
    }

    /// Runs the `engage` CLI against this process (its address, and `data_dir`, where its admin
    /// key is) as a user would ([`cli`]); its output, which must say success.
    pub fn cli(&self, data_dir: &Path, args: &[&str]) -> std::process::Output {
        let addr = format!("127.0.0.1:{}", self.port);
        let data = data_dir.to_string_lossy();
        let env = [("ENGAGE_HTTP_ADDR", addr.as_str()), ("ENGAGE_DATA_DIR", data.as_ref())];
        let output = cli(data_dir.parent().unwrap_or(data_dir), &env, args);
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        output
    }

    /// Waits until `/readyz` answers 200.
    pub async fn wait_ready(&self, within: Duration) {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + within;
        loop {
            if let Ok(response) = client.get(format!("{}/readyz", self.base)).send().await {
                if response.status() == 200 {
                    return;
                }
            }
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            assert!(Instant::now() < deadline, "engage on port {} did not become ready:\n{log}", self.port);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Its stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM (a graceful stop, as an operator's `systemctl stop` or a rolling restart sends
    /// it), without waiting.
    pub fn terminate(&self) {
        let status = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill -TERM");
    }

    /// Waits until the process has exited (at most `within`); whether it exited cleanly.
    pub async fn wait_exit(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(Instant::now() < deadline, "engage on port {} did not exit:\n{}", self.port, self.stderr());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL, and wait for it.
    pub fn kill9(&mut self) {
        let _ = self.child.kill(); // SIGKILL
        let _ = self.child.wait();
    }
}

impl Drop for Engage {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// `command` without the test process's own `ENGAGE_*` settings (the harness's `ENGAGE_TEST_*`
/// stay: no command reads them as settings) and `OTEL_*` exporter settings: it sees only what the
/// test gives it, as a user's shell would.
pub fn as_a_user(command: &mut Command) -> &mut Command {
    let own = |k: &str| (k.starts_with("ENGAGE_") && !k.starts_with("ENGAGE_TEST_")) || k.starts_with("OTEL_");
    for (name, _) in std::env::vars().filter(|(k, _)| own(k)) {
        command.env_remove(name);
    }
    command
}

/// Runs the `engage` CLI in `cwd` with `env` (and none of the test process's own settings,
/// [`as_a_user`]); its output.
pub fn cli(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut command = Command::new(BIN);
    as_a_user(command.args(args).current_dir(cwd)).envs(env.iter().copied()).output().unwrap()
}

/// [`cli`] off the test's runtime (an in-process server on the same runtime keeps answering).
pub async fn cli_async(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let cwd = cwd.to_owned();
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli(&cwd, &env, &args)
    })
    .await
    .unwrap()
}
