//! Every updater's first 2-3 steps on a small vector, against arithmetic written out by hand.

use super::{close, close_all};
use crate::*;

fn map_schedule(kind: ScheduleType, pairs: &[(i64, f64)]) -> Schedule {
    Schedule::Map(MapSchedule {
        schedule_type: kind,
        values: pairs.iter().copied().collect(),
    })
}

#[test]
fn sgd_steps() {
    let u = Sgd {
        learning_rate: 0.1,
        learning_rate_schedule: None,
    };
    let mut st: [f64; 0] = [];
    let mut g = [2.0, -4.0];
    u.apply(&mut g, &mut st, 0, 0);
    close_all(&g, &[0.2, -0.4]);
    let mut g = [0.5, 0.0];
    u.apply(&mut g, &mut st, 1, 0);
    close_all(&g, &[0.05, 0.0]);
}

#[test]
fn sgd_with_step_schedule_uses_the_iteration() {
    // StepSchedule(ITERATION, 0.1, 0.5, 1): lr = 0.1, 0.05, 0.025 at iterations 0, 1, 2.
    let u = Sgd {
        learning_rate: 7.0, // ignored: the schedule wins
        learning_rate_schedule: Some(Schedule::Step(StepSchedule {
            schedule_type: ScheduleType::Iteration,
            initial_value: 0.1,
            decay_rate: 0.5,
            step: 1.0,
        })),
    };
    let mut st: [f64; 0] = [];
    for (it, lr) in [(0, 0.1), (1, 0.05), (2, 0.025)] {
        let mut g = [2.0, -1.0];
        u.apply(&mut g, &mut st, it, 99);
        close_all(&g, &[2.0 * lr, -lr]);
        close(u.learning_rate_at(it, 99), lr);
    }
}

#[test]
fn sgd_with_epoch_schedule_uses_the_epoch() {
    // ExponentialSchedule(EPOCH, 0.1, 0.5): epoch 0 -> 0.1, epoch 2 -> 0.025.
    let u = AnyUpdater::Sgd(Sgd {
        learning_rate: 0.1,
        learning_rate_schedule: Some(Schedule::Exponential(ExponentialSchedule {
            schedule_type: ScheduleType::Epoch,
            initial_value: 0.1,
            gamma: 0.5,
        })),
    });
    let mut opt = Optimizer::<f64>::new([(0..1, u)]);
    let mut g = [1.0];
    opt.step(&mut g, 5, 0);
    close(g[0], 0.1);
    let mut g = [1.0];
    opt.step(&mut g, 6, 2);
    close(g[0], 0.025);
}

#[test]
fn adam_first_three_steps_by_hand() {
    let u = Adam {
        learning_rate: 0.01,
        ..Adam::default()
    };
    let mut st = [0.0f64; 2];
    // Step 1 (t=1), g=2: m=0.2, v=0.004, alpha=0.01*sqrt(0.001)/0.1,
    // update = alpha*0.2/(sqrt(0.004)+1e-8).
    let mut g = [2.0];
    u.apply(&mut g, &mut st, 0, 0);
    close(st[0], 0.2);
    close(st[1], 0.004);
    let a1 = 0.01 * 0.001f64.sqrt() / 0.1;
    close(g[0], a1 * 0.2 / (0.004f64.sqrt() + 1e-8));
    // Step 2 (t=2), g=-1: m=0.9*0.2-0.1=0.08, v=0.999*0.004+0.001=0.004996,
    // alpha=0.01*sqrt(1-0.999^2)/(1-0.81).
    let mut g = [-1.0];
    u.apply(&mut g, &mut st, 1, 0);
    close(st[0], 0.08);
    close(st[1], 0.004996);
    let a2 = 0.01 * (1.0 - 0.998001f64).sqrt() / 0.19;
    close(g[0], a2 * 0.08 / (0.004996f64.sqrt() + 1e-8));
    // Step 3 (t=3), g=0.5: m=0.072+0.05=0.122, v=0.004991004+0.00025=0.005241004.
    let mut g = [0.5];
    u.apply(&mut g, &mut st, 2, 0);
    close(st[0], 0.122);
    close(st[1], 0.005241004);
    let a3 = 0.01 * (1.0 - 0.997002999f64).sqrt() / (1.0 - 0.729);
    close(g[0], a3 * 0.122 / (0.005241004f64.sqrt() + 1e-8));
}

#[test]
fn adam_two_element_block_layout_m_then_v() {
    let u = Adam {
        learning_rate: 0.01,
        ..Adam::default()
    };
    let mut st = [0.0f64; 4];
    let mut g = [2.0, -1.0];
    u.apply(&mut g, &mut st, 0, 0);
    // m = 0.1*g, v = 0.001*g^2
    close_all(&st, &[0.2, -0.1, 0.004, 0.001]);
    let a1 = 0.01 * 0.001f64.sqrt() / 0.1;
    close_all(
        &g,
        &[
            a1 * 0.2 / (0.004f64.sqrt() + 1e-8),
            a1 * -0.1 / (0.001f64.sqrt() + 1e-8),
        ],
    );
}

#[test]
fn adamax_first_three_steps_by_hand() {
    let u = AdaMax {
        learning_rate: 0.01,
        ..AdaMax::default()
    };
    let eps = 1e-8;
    // m0 m1 u0 u1
    let mut st = [0.0f64; 4];
    // Step 1 (t=1), g=[2,-1]: m=[0.2,-0.1], u=max(0,|g|)=[2,1], alpha=0.01/(1-0.9)=0.1.
    let mut g = [2.0, -1.0];
    u.apply(&mut g, &mut st, 0, 0);
    close_all(&st, &[0.2, -0.1, 2.0, 1.0]);
    let a = 0.01 / 0.1;
    close_all(&g, &[a * 0.2 / (2.0 + eps), a * -0.1 / (1.0 + eps)]);
    // Step 2 (t=2), g=[-1,0.5]: m=[0.18-0.1, -0.09+0.05]=[0.08,-0.04];
    // u=max(0.999*[2,1], [1,0.5])=[1.998,0.999]; alpha=0.01/(1-0.81).
    let mut g = [-1.0, 0.5];
    u.apply(&mut g, &mut st, 1, 0);
    close_all(&st, &[0.08, -0.04, 1.998, 0.999]);
    let a = 0.01 / 0.19;
    close_all(&g, &[a * 0.08 / (1.998 + eps), a * -0.04 / (0.999 + eps)]);
    // Step 3 (t=3), g=[3,0]: m=[0.072+0.3, -0.036]=[0.372,-0.036];
    // u=max(0.999*[1.998,0.999],[3,0])=[3,0.998001]; alpha=0.01/(1-0.729).
    let mut g = [3.0, 0.0];
    u.apply(&mut g, &mut st, 2, 0);
    close_all(&st, &[0.372, -0.036, 3.0, 0.998001]);
    let a = 0.01 / 0.271;
    close_all(
        &g,
        &[a * 0.372 / (3.0 + eps), a * -0.036 / (0.998001 + eps)],
    );
}

#[test]
fn nadam_first_two_steps_by_hand() {
    let u = Nadam {
        learning_rate: 0.01,
        ..Nadam::default()
    };
    let eps = 1e-8;
    // m0 m1 v0 v1
    let mut st = [0.0f64; 4];
    // Step 1 (t=1), g=[2,-1]: m=[0.2,-0.1], v=[0.004,0.001], c=0.01/(1-0.9)=0.1,
    // update = c*(0.9*m + 0.1*g)/(sqrt(v)+eps) = 0.1*[0.18+0.2, -0.09-0.1]/(...).
    let mut g = [2.0, -1.0];
    u.apply(&mut g, &mut st, 0, 0);
    close_all(&st, &[0.2, -0.1, 0.004, 0.001]);
    close_all(
        &g,
        &[
            0.1 * 0.38 / (0.004f64.sqrt() + eps),
            0.1 * -0.19 / (0.001f64.sqrt() + eps),
        ],
    );
    // Step 2 (t=2), g=[-1,0.5]: m=[0.08,-0.04], v=0.999*[0.004,0.001]+0.001*[1,0.25]
    // =[0.004996,0.001249], c=0.01/0.19, numerators 0.9*0.08-0.1=-0.028 and -0.036+0.05=0.014.
    let mut g = [-1.0, 0.5];
    u.apply(&mut g, &mut st, 1, 0);
    close_all(&st, &[0.08, -0.04, 0.004996, 0.001249]);
    let c = 0.01 / 0.19;
    close_all(
        &g,
        &[
            c * -0.028 / (0.004996f64.sqrt() + eps),
            c * 0.014 / (0.001249f64.sqrt() + eps),
        ],
    );
}

#[test]
fn amsgrad_first_three_steps_by_hand() {
    let u = AMSGrad {
        learning_rate: 0.01,
        ..AMSGrad::default()
    };
    let eps = 1e-8;
    // m0 m1 v0 v1 vhat0 vhat1
    let mut st = [0.0f64; 6];
    // Step 1 (t=1), g=[2,-1]: m=[0.2,-0.1], v=vhat=[0.004,0.001], alpha=0.01*sqrt(0.001)/0.1.
    let mut g = [2.0, -1.0];
    u.apply(&mut g, &mut st, 0, 0);
    close_all(&st, &[0.2, -0.1, 0.004, 0.001, 0.004, 0.001]);
    let a = 0.01 * 0.001f64.sqrt() / 0.1;
    close_all(
        &g,
        &[
            a * 0.2 / (0.004f64.sqrt() + eps),
            a * -0.1 / (0.001f64.sqrt() + eps),
        ],
    );
    // Step 2 (t=2), g=[0,0.5]: m=[0.18,-0.04], v=[0.003996, 0.000999+0.00025=0.001249],
    // vhat=max(vhat,v)=[0.004 (kept), 0.001249], alpha=0.01*sqrt(1-0.998001)/0.19.
    let mut g = [0.0, 0.5];
    u.apply(&mut g, &mut st, 1, 0);
    close_all(&st, &[0.18, -0.04, 0.003996, 0.001249, 0.004, 0.001249]);
    let a = 0.01 * (1.0 - 0.998001f64).sqrt() / 0.19;
    close_all(
        &g,
        &[
            a * 0.18 / (0.004f64.sqrt() + eps),
            a * -0.04 / (0.001249f64.sqrt() + eps),
        ],
    );
    // Step 3 (t=3), g=[0,0]: m=[0.162,-0.036], v=[0.003992004,0.001247751], vhat unchanged,
    // alpha=0.01*sqrt(1-0.997002999)/0.271.
    let mut g = [0.0, 0.0];
    u.apply(&mut g, &mut st, 2, 0);
    close_all(
        &st,
        &[0.162, -0.036, 0.003992004, 0.001247751, 0.004, 0.001249],
    );
    let a = 0.01 * (1.0 - 0.997002999f64).sqrt() / 0.271;
    close_all(
        &g,
        &[
            a * 0.162 / (0.004f64.sqrt() + eps),
            a * -0.036 / (0.001249f64.sqrt() + eps),
        ],
    );
}

#[test]
fn rmsprop_first_two_steps_by_hand() {
    let u = RmsProp {
        learning_rate: 0.1,
        ..RmsProp::default()
    };
    let eps = 1e-8;
    let mut st = [0.0f64; 2];
    u.init_state(&mut st);
    // the accumulator starts at epsilon
    close_all(&st, &[1e-8, 1e-8]);
    // Step 1, g=[2,-1]: s = 0.95*1e-8 + 0.05*[4,1] = [0.2000000095, 0.0500000095].
    let mut g = [2.0, -1.0];
    u.apply(&mut g, &mut st, 0, 0);
    close_all(&st, &[0.2000000095, 0.0500000095]);
    close_all(
        &g,
        &[
            0.1 * 2.0 / (0.2000000095f64.sqrt() + eps),
            -0.1 / (0.0500000095f64.sqrt() + eps),
        ],
    );
    // Step 2, g=[1,0]: s0 = 0.95*0.2000000095 + 0.05 = 0.240000009025, s1 = 0.047500009025.
    let mut g = [1.0, 0.0];
    u.apply(&mut g, &mut st, 1, 0);
    close_all(&st, &[0.240000009025, 0.047500009025]);
    close_all(&g, &[0.1 / (0.240000009025f64.sqrt() + eps), 0.0]);
}

#[test]
fn nesterovs_first_three_steps_by_hand() {
    let u = Nesterovs {
        learning_rate: 0.1,
        ..Nesterovs::default()
    };
    let mut v = [0.0f64];
    // Step 1, g=1: v = -0.1; update = 0.9*0 - 1.9*(-0.1) = 0.19.
    let mut g = [1.0];
    u.apply(&mut g, &mut v, 0, 0);
    close(v[0], -0.1);
    close(g[0], 0.19);
    // Step 2, g=1: v = -0.09 - 0.1 = -0.19; update = 0.9*(-0.1) - 1.9*(-0.19) = 0.271.
    let mut g = [1.0];
    u.apply(&mut g, &mut v, 1, 0);
    close(v[0], -0.19);
    close(g[0], 0.271);
    // Step 3, g=-2: v = -0.171 + 0.2 = 0.029; update = 0.9*(-0.19) - 1.9*0.029 = -0.2261.
    let mut g = [-2.0];
    u.apply(&mut g, &mut v, 2, 0);
    close(v[0], 0.029);
    close(g[0], -0.2261);
}

#[test]
fn nesterovs_momentum_schedule() {
    // Momentum 0.5 at iteration 0, 0.9 from iteration 1; lr 0.1.
    let u = Nesterovs {
        learning_rate: 0.1,
        learning_rate_schedule: None,
        momentum: 0.0, // ignored: the schedule wins
        momentum_schedule: Some(map_schedule(ScheduleType::Iteration, &[(0, 0.5), (1, 0.9)])),
    };
    close(u.momentum_at(0, 0), 0.5);
    close(u.momentum_at(7, 0), 0.9);
    let mut v = [0.0f64];
    // Step 1, mu=0.5, g=1: v = -0.1; update = 0.5*0 - 1.5*(-0.1) = 0.15.
    let mut g = [1.0];
    u.apply(&mut g, &mut v, 0, 0);
    close(v[0], -0.1);
    close(g[0], 0.15);
    // Step 2, mu=0.9, g=1: v = -0.09 - 0.1 = -0.19; update = -0.09 + 1.9*0.19 = 0.271.
    let mut g = [1.0];
    u.apply(&mut g, &mut v, 1, 0);
    close(v[0], -0.19);
    close(g[0], 0.271);
}

#[test]
fn adagrad_first_two_steps_by_hand() {
    let u = AdaGrad {
        learning_rate: 0.1,
        ..AdaGrad::default()
    };
    let eps = 1e-6;
    let mut st = [0.0f64; 2];
    u.init_state(&mut st);
    // history starts at epsilon
    close_all(&st, &[1e-6, 1e-6]);
    // Step 1, g=[2,-1]: h = [4.000001, 1.000001].
    let mut g = [2.0, -1.0];
    u.apply(&mut g, &mut st, 0, 0);
    close_all(&st, &[4.000001, 1.000001]);
    close_all(
        &g,
        &[
            0.1 * 2.0 / (4.000001f64.sqrt() + eps),
            -0.1 / (1.000001f64.sqrt() + eps),
        ],
    );
    // Step 2, g=[1,3]: h = [5.000001, 10.000001].
    let mut g = [1.0, 3.0];
    u.apply(&mut g, &mut st, 1, 0);
    close_all(&st, &[5.000001, 10.000001]);
    close_all(
        &g,
        &[
            0.1 / (5.000001f64.sqrt() + eps),
            0.3 / (10.000001f64.sqrt() + eps),
        ],
    );
}

#[test]
fn adadelta_first_two_steps_by_hand() {
    let u = AdaDelta::default(); // rho 0.95, eps 1e-6
                                 // msg0 msg1 msdx0 msdx1
    let mut st = [0.0f64; 4];
    // Step 1, g=[2,-1]: msg = 0.05*[4,1] = [0.2,0.05];
    // update = g*sqrt(0+1e-6)/sqrt(msg+1e-6) = [2*0.001/sqrt(0.200001), -0.001/sqrt(0.050001)];
    // msdx = 0.05*update^2.
    let mut g = [2.0, -1.0];
    u.apply(&mut g, &mut st, 0, 0);
    let u0 = 2.0 * 0.001 / 0.200001f64.sqrt();
    let u1 = -0.001 / 0.050001f64.sqrt();
    close_all(&g, &[u0, u1]);
    let (b0, b1) = (0.05 * u0 * u0, 0.05 * u1 * u1);
    close_all(&st, &[0.2, 0.05, b0, b1]);
    // Step 2, g=[1,1]: msg = [0.95*0.2+0.05, 0.95*0.05+0.05] = [0.24, 0.0975];
    // update = sqrt(msdx+1e-6)/sqrt(msg+1e-6); msdx = 0.95*msdx + 0.05*update^2.
    let mut g = [1.0, 1.0];
    u.apply(&mut g, &mut st, 1, 0);
    let w0 = (b0 + 1e-6).sqrt() / 0.240001f64.sqrt();
    let w1 = (b1 + 1e-6).sqrt() / 0.097501f64.sqrt();
    close_all(&g, &[w0, w1]);
    close_all(
        &st,
        &[
            0.24,
            0.0975,
            0.95 * b0 + 0.05 * w0 * w0,
            0.95 * b1 + 0.05 * w1 * w1,
        ],
    );
    assert!(u.learning_rate_at(0, 0).is_nan());
}

#[test]
fn noop_update_is_zero() {
    let u = NoOp {};
    assert_eq!(u.state_len(5), 0);
    let mut st: [f32; 0] = [];
    let mut g = [1.0f32, -2.0, 0.5];
    u.apply(&mut g, &mut st, 0, 0);
    assert_eq!(g, [0.0, 0.0, 0.0]);
    assert!(u.learning_rate_at(3, 1).is_nan());
    assert!(!AnyUpdater::NoOp(NoOp {}).has_learning_rate());
}

#[test]
fn learning_rate_at_fixed_and_scheduled() {
    let sched = Some(map_schedule(ScheduleType::Epoch, &[(0, 0.3), (2, 0.03)]));
    let all: Vec<AnyUpdater> = vec![
        AnyUpdater::Sgd(Sgd {
            learning_rate: 0.5,
            learning_rate_schedule: None,
        }),
        AnyUpdater::Adam(Adam {
            learning_rate: 0.5,
            ..Adam::default()
        }),
        AnyUpdater::AdaMax(AdaMax {
            learning_rate: 0.5,
            ..AdaMax::default()
        }),
        AnyUpdater::Nadam(Nadam {
            learning_rate: 0.5,
            ..Nadam::default()
        }),
        AnyUpdater::AMSGrad(AMSGrad {
            learning_rate: 0.5,
            ..AMSGrad::default()
        }),
        AnyUpdater::RmsProp(RmsProp {
            learning_rate: 0.5,
            ..RmsProp::default()
        }),
        AnyUpdater::Nesterovs(Nesterovs {
            learning_rate: 0.5,
            ..Nesterovs::default()
        }),
        AnyUpdater::AdaGrad(AdaGrad {
            learning_rate: 0.5,
            ..AdaGrad::default()
        }),
    ];
    for u in all {
        assert!(u.has_learning_rate());
        close(u.learning_rate_at(10, 3), 0.5);
        let mut c = u.to_config();
        match &mut c {
            UpdaterConfig::Sgd(x) => x.learning_rate_schedule = sched.clone(),
            UpdaterConfig::Adam(x) => x.learning_rate_schedule = sched.clone(),
            UpdaterConfig::AdaMax(x) => x.learning_rate_schedule = sched.clone(),
            UpdaterConfig::Nadam(x) => x.learning_rate_schedule = sched.clone(),
            UpdaterConfig::AMSGrad(x) => x.learning_rate_schedule = sched.clone(),
            UpdaterConfig::RmsProp(x) => x.learning_rate_schedule = sched.clone(),
            UpdaterConfig::Nesterovs(x) => x.learning_rate_schedule = sched.clone(),
            UpdaterConfig::AdaGrad(x) => x.learning_rate_schedule = sched.clone(),
            _ => unreachable!(),
        }
        let s = c.to_updater();
        close(s.learning_rate_at(10, 0), 0.3);
        close(s.learning_rate_at(10, 1), 0.3);
        close(s.learning_rate_at(10, 2), 0.03);
    }
    assert!(AnyUpdater::AdaDelta(AdaDelta::default())
        .learning_rate_at(0, 0)
        .is_nan());
}

#[test]
fn f32_and_f64_agree_to_f32_precision() {
    for u in super::every_updater() {
        let mut a = Optimizer::<f32>::new([(0..3, u.clone())]);
        let mut b = Optimizer::<f64>::new([(0..3, u.clone())]);
        for it in 0..4u64 {
            let g64 = [0.3 * (it as f64 + 1.0), -0.7, 0.05];
            let mut g32 = g64.map(|x| x as f32);
            let mut g = g64;
            a.step(&mut g32, it, 0);
            b.step(&mut g, it, 0);
            for (x, y) in g32.iter().zip(g.iter()) {
                assert!(
                    ((*x as f64) - y).abs() <= 1e-5 * (1.0 + y.abs()),
                    "{u:?}: {x} vs {y}"
                );
            }
        }
    }
}
