//! What the start of a gradient-sharing fit costs the driver: N workers connect at once to a
//! `DriverRelay` holding P parameters and 2P values of Adam state, and each receives its snapshot
//! (docs/SCALING.md, "The start of a fit").
//!
//! ```text
//! cargo run --release -p ferrodl-sharing --example connect_memory -- \
//!     [--params 5000000] [--workers 16] [--sealed true|false]
//! ```
//!
//! The workers are child processes (this program run again with `--worker`), so the driver
//! process's native memory (`ferrodl_memory`'s counting allocator) holds only the relay and its
//! master copy. One line, `CONNECT {json}`, with the native memory the relay held above
//! its master copy at the peak of the connects, that peak as snapshot sizes, and the wall time until
//! every worker had its snapshot.

use ferrodl_memory::CountingAllocator;
use ferrodl_relay::{ClientConfig, RelayClient, WorkerId};
use ferrodl_sharing::DriverRelay;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .map_or_else(|| default.to_string(), |i| args[i + 1].clone())
}

/// A worker: connect, take the snapshot, finish.
fn worker(addr: &str, partition: u32, sealed: bool) {
    let secret = (0..SECRET.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&SECRET[i..i + 2], 16).expect("hex"))
        .collect();
    let config = ClientConfig {
        secret,
        worker: WorkerId { partition, attempt: 0 },
        io_timeout: Duration::from_secs(120),
        encrypt: sealed,
        ..ClientConfig::default()
    };
    let (client, snapshot) =
        RelayClient::connect(addr, config, Box::new(|_: &[u8]| {})).expect("connect");
    assert!(snapshot.len() > 32);
    client.finish().expect("finish");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sealed: bool = arg(&args, "--sealed", "true").parse().expect("--sealed");
    if let Some(i) = args.iter().position(|a| a == "--worker") {
        worker(&args[i + 1], args[i + 2].parse().expect("partition"), sealed);
        return;
    }
    let n: usize = arg(&args, "--params", "5000000").parse().expect("--params");
    let workers: u32 = arg(&args, "--workers", "16").parse().expect("--workers");
    let snapshot_bytes = 32 + 4 * 3 * n as u64;
    {
        let settings = serde_json::json!({
            "bindHost": "127.0.0.1", "secretHex": SECRET, "maxMessageBytes": 1 << 26,
            "queueLimit": 64, "ioTimeoutMs": 120_000, "handshakeTimeoutMs": 60_000,
            "encrypt": sealed,
        })
        .to_string();
        let mut relay = DriverRelay::start(&settings, vec![0.01; n], vec![0.5; 2 * n], 0, 0)
            .expect("relay");
        let addr = format!("127.0.0.1:{}", relay.port());
        let base = ferrodl_memory::in_use();
        let t0 = Instant::now();
        let children: Vec<_> = (0..workers)
            .map(|p| {
                Command::new(std::env::current_exe().expect("exe"))
                    .args(["--worker", &addr, &p.to_string(), "--sealed", &sealed.to_string()])
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("spawn a worker")
            })
            .collect();
        for mut c in children {
            assert!(c.wait().expect("worker").success(), "a worker failed");
        }
        let wall = t0.elapsed().as_secs_f64();
        // the master copy is the process's largest allocation before the connects, so the peak
        // of the whole run is the peak of the connects
        let above = ferrodl_memory::peak().saturating_sub(base);
        let stats = relay.stats();
        relay.shutdown().expect("shutdown");
        println!(
            "CONNECT {}",
            serde_json::json!({
                "params": n, "workers": workers, "sealed": sealed,
                "snapshot_bytes": snapshot_bytes,
                "relay_peak_bytes_above_master_copy": above,
                "peak_in_snapshots": above as f64 / snapshot_bytes as f64,
                "wall_s": wall,
                "connections_accepted": stats.connections_accepted,
            })
        );
    }
}
