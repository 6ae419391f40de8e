//! `mentisdb-pgbench`: several in-process `mentisdbd` instances on one
//! PostgreSQL database (`--pg-url`, an admin URL; the bench creates a fresh
//! database in it):
//!
//! 1. durable appends/s to one chain through 1 instance and through 3
//!    (16 clients per instance), and to 16 chains through 3;
//! 2. cross-instance visibility lag: from sending an append to instance A
//!    until instance B's event stream delivers it (B learns of it by
//!    PostgreSQL `NOTIFY`, reads and verifies the new record), p50 and p99;
//! 3. a fresh instance opening the database with a 100k-thought chain in
//!    it (every record read from PostgreSQL and verified), and how much its
//!    resident memory grew.
//!
//! Each throughput phase also prints how the instances' appends reached
//! PostgreSQL: group writes (one conditional write of a chain's appends
//! each; several chains' share a transaction) and lost races (a write
//! refused because another instance appended to the chain first, then
//! re-based and written again) per 1,000 appends (`MentisDb::write_counts`).
//!
//! Prints figures; asserts only that requests succeed and every thought
//! arrives. Start a server as `scripts/stages/25-postgres.sh` does, then
//! `cargo run --release -p mentisdb-tests --bin mentisdb-pgbench -- --pg-url postgres://mentisdb@127.0.0.1:PORT/postgres`.

use clap::Parser;
use mentisdb_tests::bench::{appends, appends_through, event_latencies, percentile, Balancer, MachineWork};
use std::time::{Duration, Instant};

#[derive(Debug, Parser)]
#[command(about = "Several mentisdbd instances on one PostgreSQL database: appends/s, cross-instance lag, first-use load time.")]
struct Args {
    /// Admin URL of a PostgreSQL server (a fresh database is created in it).
    #[arg(long)]
    pg_url: String,
    /// Appends in each throughput phase.
    #[arg(long, default_value_t = 10_000)]
    appends: usize,
    /// Append clients per instance.
    #[arg(long, default_value_t = 16)]
    clients_per_instance: usize,
    /// Appends timed one at a time for the lag figure.
    #[arg(long, default_value_t = 1_000)]
    lag_appends: usize,
    /// Throughput phases to run, of `one` (one chain, 1 instance), `three`
    /// (one chain, 3 instances), `many` (16 chains, 3 instances; each
    /// chain's 3 clients always on 3 different instances), `balanced` (16
    /// chains, every append to the next instance in turn, as a round-robin
    /// load balancer sends them) and `affine` (15 chains, each through one
    /// instance).
    #[arg(long, value_delimiter = ',', default_value = "one,three,many,balanced,affine")]
    phases: Vec<Phase>,
    /// Thoughts of the chain opened on first use (0 skips it).
    #[arg(long, default_value_t = 100_000)]
    load_thoughts: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Phase {
    One,
    Three,
    Many,
    Balanced,
    Affine,
}

async fn instance(url: &str, dir: &std::path::Path) -> mentisdb_native::RunningDaemon {
    let mut config = mentisdb_native::Config::for_dir(dir);
    config.storage_url = Some(mentisdb_native::config::StorageUrl::from_arg(url).expect("infallible"));
    mentisdb_native::start(&config).await.expect("start an instance on PostgreSQL")
}

fn main() {
    let args = Args::parse();
    // Before the runtime: the synchronous PostgreSQL client runs one of its own.
    let url = mentisdb_pg_storage::testdb::fresh_database(&args.pg_url, "bench").expect("a fresh database");
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime").block_on(run(args, url));
}

async fn run(args: Args, url: String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut daemons = Vec::new();
    for _ in 0..3 {
        daemons.push(instance(&url, dir.path()).await);
    }
    let bases: Vec<String> = daemons.iter().map(|d| format!("http://{}", d.rest_addr)).collect();
    let client = reqwest::Client::builder().pool_max_idle_per_host(1024).tcp_nodelay(true).build().expect("client");
    let per = args.clients_per_instance;
    println!("3 in-process instances on {} (fsync on: an acknowledged append is committed; appends arriving together share a commit)", url.split('@').next_back().unwrap_or(""));

    let has = |p: Phase| args.phases.contains(&p);
    if has(Phase::One) {
        let start = PhaseStart::now(&daemons);
        let one = appends(&client, &bases[..1], |_| "one".into(), per, args.appends).await;
        start.report(&format!("one chain, 1 instance, {per} clients"), one, &daemons, args.appends);
    }
    if has(Phase::Three) {
        let start = PhaseStart::now(&daemons);
        let three = appends(&client, &bases, |_| "three".into(), 3 * per, args.appends).await;
        start.report(&format!("one chain, 3 instances, {} clients", 3 * per), three, &daemons, args.appends);
    }
    if has(Phase::Many) {
        let start = PhaseStart::now(&daemons);
        let many = appends(&client, &bases, |c| format!("many-{}", c % 16), 3 * per, args.appends).await;
        start.report(&format!("16 chains, 3 instances, {} clients", 3 * per), many, &daemons, args.appends);
    }
    if has(Phase::Balanced) {
        let start = PhaseStart::now(&daemons);
        let balanced = appends_through(&client, &bases, Balancer::RoundRobin, |c| format!("balanced-{}", c % 16), 3 * per, args.appends).await;
        start.report(&format!("16 chains, 3 instances behind a round-robin balancer, {} clients", 3 * per), balanced, &daemons, args.appends);
    }
    if has(Phase::Affine) {
        // What a chain-affine load balancer gives: no two instances race on one chain.
        let start = PhaseStart::now(&daemons);
        let affine = appends(&client, &bases, |c| format!("affine-{}", c % 3 + 3 * ((c / 3) % 5)), 3 * per, args.appends).await;
        start.report(&format!("15 chains, each through one of 3 instances, {} clients", 3 * per), affine, &daemons, args.appends);
    }
    let phases_run = [Phase::One, Phase::Three, Phase::Many, Phase::Balanced, Phase::Affine].into_iter().filter(|p| has(*p)).count() as u64;

    // B first takes in everything the phases above appended, so the lag is measured on a quiet daemon.
    let drained = Instant::now();
    loop {
        let chains: serde_json::Value = client.get(format!("{}/v1/chains", bases[1])).send().await.expect("chains").json().await.expect("chains reply");
        let held: u64 = chains["chains"].as_array().map(|cs| cs.iter().filter_map(|c| c["thought_count"].as_u64()).sum()).unwrap_or(0);
        if held >= phases_run * args.appends as u64 {
            println!("instance B held all {held} thoughts {} ms after the last append", drained.elapsed().as_millis());
            break;
        }
        assert!(drained.elapsed() < Duration::from_secs(120), "instance B did not take in the appends within 120 s ({held})");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Lag: append through A, seen in B's event stream.
    let got = event_latencies(&client, &bases[0], &bases[1], "lag", args.lag_appends).await;
    println!(
        "append through A -> event on B (one at a time, fsync included): {} appends, p50 {:.2} ms, p99 {:.2} ms",
        got.len(),
        percentile(&got, 0.5).as_secs_f64() * 1e3,
        percentile(&got, 0.99).as_secs_f64() * 1e3
    );

    if args.load_thoughts > 0 {
        // In tenths, to show whether the rate depends on the chain's length.
        let tenth = (args.load_thoughts / 10).max(1);
        let mut rates = Vec::new();
        for _ in 0..args.load_thoughts.div_ceil(tenth) {
            rates.push(format!("{:.0}", appends(&client, &bases[..1], |_| "big".into(), per, tenth).await));
        }
        println!("filled a {}-thought chain through one instance, appends/s per tenth: {}", args.load_thoughts, rates.join(", "));
        let rss_before = resident_kib();
        let started = Instant::now();
        let fresh = instance(&url, dir.path()).await;
        let opened = started.elapsed();
        let grown = resident_kib().zip(rss_before).map(|(a, b)| a.saturating_sub(b));
        let thoughts: usize = fresh.report.chains.iter().map(|c| c.thought_count).sum();
        println!(
            "a fresh instance opened the database ({thoughts} thoughts in {} chains, every record read from PostgreSQL and verified) in {} ms; resident memory grew by {}",
            fresh.report.chains.len(),
            opened.as_millis(),
            grown.map(|k| format!("{:.1} MiB = {:.1} MiB per 100k thoughts", k as f64 / 1024.0, k as f64 / 1024.0 * 100_000.0 / thoughts.max(1) as f64)).unwrap_or_else(|| "? (no /proc)".into())
        );
        fresh.shutdown().await;
    }
    for d in daemons {
        d.shutdown().await;
    }
}

/// What the machine had spent and the instances had written when a
/// throughput phase began, to report what the phase cost.
struct PhaseStart {
    work: Option<MachineWork>,
    counts: (u64, u64),
}

impl PhaseStart {
    fn now(daemons: &[mentisdb_native::RunningDaemon]) -> Self {
        PhaseStart { work: MachineWork::now(), counts: write_counts(daemons) }
    }

    /// Prints `label: rate appends/s`, what the whole machine spent on the
    /// phase's `appends` appends, and the instances' group writes (one
    /// conditional write each) and lost races per 1,000 appends.
    fn report(self, label: &str, rate: f64, daemons: &[mentisdb_native::RunningDaemon], appends: usize) {
        let machine = self.work.map_or_else(|| MachineWork::UNKNOWN.into(), |w| w.per_thousand_since(appends));
        let (writes, races) = write_counts(daemons);
        let per = |n: u64| n as f64 * 1000.0 / appends.max(1) as f64;
        println!("{label}: {rate:.0} appends/s ({machine}; {:.0} group writes and {:.0} lost races per 1,000 appends)", per(writes - self.counts.0), per(races - self.counts.1));
    }
}

/// Group writes and lost races summed over the instances.
fn write_counts(daemons: &[mentisdb_native::RunningDaemon]) -> (u64, u64) {
    daemons.iter().map(|d| d.db.write_counts()).fold((0, 0), |acc, c| (acc.0 + c.group_writes, acc.1 + c.lost_races))
}

/// This process's resident memory in KiB (Linux `/proc/self/status`).
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
