//! Relay throughput: 2 clients each send `count` updates of `size` bytes through a relay on
//! 127.0.0.1 (each applied by a trivial master state and forwarded to the other client), and the
//! wall time until both have finished is printed as messages per second.
//!
//! `cargo run --release -p ferrodl-relay --example relay_throughput [size] [count] [repeats] [plain|sealed]`
//!
//! `sealed` turns on frame encryption (ChaCha20-Poly1305) on the relay and both clients.

use ferrodl_relay::{ClientConfig, MasterState, Relay, RelayClient, RelayConfig, SnapshotBytes, WorkerId};
use std::time::{Duration, Instant};

struct Count(u64);

impl MasterState for Count {
    fn apply(&mut self, _worker: WorkerId, payload: &[u8]) -> Result<(), String> {
        self.0 += payload.len() as u64;
        Ok(())
    }
    fn snapshot(&self) -> SnapshotBytes {
        self.0.to_le_bytes().to_vec().into()
    }
}

const SECRET: &[u8] = b"throughput-secret-0123456789";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).map_or(1600, |a| a.parse().unwrap());
    let count: usize = args.get(2).map_or(5000, |a| a.parse().unwrap());
    let repeats: usize = args.get(3).map_or(5, |a| a.parse().unwrap());
    let encrypt = match args.get(4).map(String::as_str) {
        None | Some("plain") => false,
        Some("sealed") => true,
        Some(other) => panic!("mode must be plain or sealed, got {other}"),
    };
    let mut rates = Vec::new();
    for _ in 0..repeats {
        let cfg = RelayConfig {
            bind_host: "127.0.0.1".into(),
            secret: SECRET.to_vec(),
            max_message_bytes: 1 << 24,
            queue_limit_messages: 64,
            io_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(5),
            log: None,
            encrypt,
            ..RelayConfig::default()
        };
        let relay = Relay::start(cfg, Box::new(Count(0))).unwrap();
        let addr = relay.local_addr().to_string();
        let started = Instant::now();
        std::thread::scope(|s| {
            for p in 0..2u32 {
                let addr = addr.clone();
                s.spawn(move || {
                    let cc = ClientConfig {
                        secret: SECRET.to_vec(),
                        worker: WorkerId {
                            partition: p,
                            attempt: 0,
                        },
                        connect_timeout: Duration::from_secs(5),
                        io_timeout: Duration::from_secs(30),
                        max_message_bytes: 1 << 24,
                        queue_limit_messages: 64,
                        encrypt,
                    };
                    let (c, _) = RelayClient::connect(&addr, cc, Box::new(|_: &[u8]| {})).unwrap();
                    let msg = vec![(p as u8).wrapping_add(1); size];
                    for _ in 0..count {
                        c.send(msg.clone()).unwrap();
                    }
                    c.finish().unwrap();
                });
            }
        });
        let secs = started.elapsed().as_secs_f64();
        relay.shutdown();
        rates.push(2.0 * count as f64 / secs);
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "size {size} B, {}: median {:.0} messages/s through the relay (min {:.0}, max {:.0}, {repeats} runs)",
        if encrypt { "sealed" } else { "plain" },
        rates[rates.len() / 2],
        rates[0],
        rates[rates.len() - 1]
    );
}
