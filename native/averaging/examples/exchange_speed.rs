//! How long one averaging round's exchange takes through the relay on 127.0.0.1, with no training:
//! two workers (threads) send the MNIST MLP's parameters and Adam state (443,610 + 887,220 f32)
//! each round, wait for the other's message and average. Prints the median and spread of the round
//! time and of its parts over the rounds (the first 5 are warm-up).
//!
//! cargo run --release -p ferrodl-averaging --example exchange_speed [rounds] [params]
use ferrodl_averaging::master::AveragingDriver;
use ferrodl_averaging::worker::AveragingWorker;
use std::time::{Duration, Instant};

const SECRET: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(443_610);
    let workers = 2u32;
    let max = 64 + 4 * 3 * n + 64;
    let settings = format!(
        r#"{{"bindHost":"127.0.0.1","portFrom":null,"portTo":null,"secretHex":"{SECRET}","maxMessageBytes":{max},"queueLimit":8,"ioTimeoutMs":30000,"handshakeTimeoutMs":5000,"encrypt":false,"inProcess":false}}"#
    );
    let mut d = AveragingDriver::start(&settings, workers, rounds, &vec![0.5; n], Some(&vec![0.0; 2 * n])).unwrap();
    let port = d.port();
    let handles: Vec<_> = (0..workers)
        .map(|p| {
            std::thread::spawn(move || {
                let json = format!(
                    r#"{{"relayAddress":"127.0.0.1:{port}","secretHex":"{SECRET}","partition":{p},"attempt":0,"stage":0,"workers":{workers},"connectTimeoutMs":5000,"ioTimeoutMs":30000,"queueLimit":8,"maxMessageBytes":{max},"encrypt":false}}"#
                );
                let mut w = AveragingWorker::connect(&json).unwrap();
                while !w.await_peers(Duration::from_millis(20)).unwrap() {}
                let mut params = vec![p as f32 + 0.5; n];
                let mut upd = vec![p as f32 * 0.25; 2 * n];
                let mut times = Vec::new();
                for round in 0..rounds {
                    let t0 = Instant::now();
                    w.send_round(round, 10, 10, 320, 0.0, Some(&params), Some(&upd)).unwrap();
                    let t1 = Instant::now();
                    while !w.await_round(round, Duration::from_millis(100)).unwrap() {}
                    let t2 = Instant::now();
                    w.average_params_into(&mut params).unwrap();
                    w.average_updater_into(&mut upd).unwrap();
                    let t3 = Instant::now();
                    times.push([t1 - t0, t2 - t1, t3 - t2, t3 - t0]);
                }
                w.finish().unwrap();
                times
            })
        })
        .collect();
    let all: Vec<Vec<[Duration; 4]>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    d.shutdown().unwrap();
    for (p, times) in all.iter().enumerate() {
        let mut cols: Vec<Vec<f64>> = vec![Vec::new(); 4];
        for t in times.iter().skip(5) {
            for (c, d) in cols.iter_mut().zip(t) {
                c.push(d.as_secs_f64() * 1e3);
            }
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            (v[v.len() / 2], v[v.len() / 10], v[v.len() * 9 / 10])
        };
        let names = ["send", "wait", "average", "round"];
        let line: Vec<String> = cols
            .iter_mut()
            .zip(names)
            .map(|(c, name)| {
                let (m, lo, hi) = med(c);
                format!("{name} {m:.2} ({lo:.2}-{hi:.2})")
            })
            .collect();
        println!("worker {p}: ms per round, median (p10-p90): {}", line.join(", "));
    }
}
