//! Times `Optimizer::step_and_apply` for every updater on a 784-500-100-10 MLP's parameter blocks
//! (443,610 f32 values), at 1 thread and at the default thread count, and checks that both
//! thread counts give bit-identical parameters; and `step` alone (the update without the
//! subtraction, as gradient sharing computes it) on one thread. Then, on one thread, weight decay:
//! the three passes (`step`, `axpy` per block, `sub_assign`) against `step_with_decay` (one pass).
//!
//! `cargo run --release -p ferrodl-optim --example optimizer_step`

use ferrodl_optim::*;
use std::time::Instant;

fn blocks(u: &AnyUpdater) -> Vec<(std::ops::Range<usize>, AnyUpdater)> {
    let sizes = [784 * 500, 500, 500 * 100, 100, 100 * 10, 10];
    let mut start = 0;
    sizes
        .iter()
        .map(|&n| {
            let r = start..start + n;
            start += n;
            (r, u.clone())
        })
        .collect()
}

/// How a timed step runs.
#[derive(Clone, Copy)]
enum Kind {
    /// `step_and_apply`, as `fit` runs it.
    Fused,
    /// `step`: the update only, as gradient sharing's `compute_update` runs it.
    UpdateOnly,
    /// Weight decay (1e-7 on every block) in three passes: `step`, `axpy` per block, `sub_assign`.
    DecayThreePasses,
    /// The same in one pass: `step_with_decay`.
    DecayOnePass,
}

/// Best µs of `steps` steps of `kind` on `threads` threads, and the parameters they end at.
fn run(u: &AnyUpdater, threads: usize, steps: u64, kind: Kind) -> (f64, Vec<f32>) {
    ferrodl_tensor::set_num_threads(threads);
    let _ftz = ferrodl_tensor::flush_denormals();
    let n = 443_610;
    let bl = blocks(u);
    let decay = vec![1e-7f32; bl.len()];
    let mut opt = Optimizer::<f32>::new(bl.clone());
    let mut rng = ferrodl_tensor::Rng::new(7);
    let mut params = vec![0f32; n];
    rng.fill_normal(&mut params, 0.05);
    let mut grads = vec![vec![0f32; n]; 4];
    for g in &mut grads {
        rng.fill_normal(g, 0.01);
    }
    let mut g = vec![0f32; n];
    let mut best = f64::INFINITY;
    for it in 0..steps {
        g.copy_from_slice(&grads[it as usize % 4]);
        let t = Instant::now();
        match kind {
            Kind::Fused => opt.step_and_apply(&mut params, &mut g, it, 0),
            Kind::UpdateOnly => opt.step(&mut g, it, 0),
            Kind::DecayOnePass => opt.step_with_decay(&mut params, &mut g, &decay, true, it, 0),
            Kind::DecayThreePasses => {
                opt.step(&mut g, it, 0);
                for ((r, _), &k) in bl.iter().zip(&decay) {
                    ferrodl_tensor::axpy(k, &params[r.clone()], &mut g[r.clone()]);
                }
                ferrodl_tensor::sub_assign(&mut params, &g);
            }
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best * 1e6, params)
}

fn main() {
    let all = [
        AnyUpdater::Sgd(Sgd::default()),
        AnyUpdater::Adam(Adam::default()),
        AnyUpdater::AdaMax(AdaMax::default()),
        AnyUpdater::Nadam(Nadam::default()),
        AnyUpdater::AMSGrad(AMSGrad::default()),
        AnyUpdater::RmsProp(RmsProp::default()),
        AnyUpdater::Nesterovs(Nesterovs::default()),
        AnyUpdater::AdaGrad(AdaGrad::default()),
        AnyUpdater::AdaDelta(AdaDelta::default()),
        AnyUpdater::NoOp(NoOp {}),
    ];
    let many = ferrodl_tensor::default_num_threads();
    println!(
        "updater    1 thread (us, best of 200)   {many} threads (us)   identical   update only, 1 thread (us)"
    );
    for u in &all {
        let (t1, p1) = run(u, 1, 200, Kind::Fused);
        let (tn, pn) = run(u, many, 200, Kind::Fused);
        let (tu, _) = run(u, 1, 200, Kind::UpdateOnly);
        let same = p1.iter().zip(&pn).all(|(a, b)| a.to_bits() == b.to_bits());
        let name = format!("{:?}", u);
        let name = name.split('(').next().unwrap_or("?");
        println!("{name:<10} {t1:>10.1} {tn:>22.1} {same:>16} {tu:>16.1}");
    }
    println!(
        "weight decay, 1 thread (us, best of 200): three passes | step_with_decay | identical"
    );
    for u in [&all[1], &all[0], &all[6]] {
        let (t3, p3) = run(u, 1, 200, Kind::DecayThreePasses);
        let (t1, p1) = run(u, 1, 200, Kind::DecayOnePass);
        let same = p1.iter().zip(&p3).all(|(a, b)| a.to_bits() == b.to_bits());
        let name = format!("{:?}", u);
        let name = name.split('(').next().unwrap_or("?");
        println!("{name:<10} {t3:>10.1} {t1:>10.1} {same:>10}");
    }
}
