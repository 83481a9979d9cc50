//! The planner's verdict card at a latency target: users one machine and two serve within it, the gain, the cost
//! per million output tokens, the band, and the commands that run the verdict's mode. Every number comes from
//! `sim_core::explore` (`compute::plan_goodput`).

use crate::compute::TargetAnswer;
use leptos::prelude::*;
use sim_core::explore::target::ModeGoodput;
use sim_core::Mode;

/// The card, above the verdict and the charts: `None` outside the planner, `Some(None)` while the bands'
/// evidence is on its way.
#[component]
pub fn TargetCard(answer: Memo<Option<Option<Result<TargetAnswer, String>>>>) -> impl IntoView {
    move || match answer.get() {
        None => ().into_any(),
        Some(None) => view! {
            <div class="verdict" id="target-card" role="status" aria-busy="true">
                <div class="verdict-mode">"Users served at the target"</div>
                <p class="verdict-reason">"Loading the evidence for its bands\u{2026}"</p>
            </div>
        }
        .into_any(),
        Some(Some(Err(e))) => view! {
            <div class="verdict verdict-error" id="target-card" role="status">
                <div class="verdict-mode">"No answer at this target"</div>
                <p class="verdict-reason">{e}</p>
            </div>
        }
        .into_any(),
        Some(Some(Ok(a))) => card(&a).into_any(),
    }
}

fn card(a: &TargetAnswer) -> impl IntoView {
    let w = a.goodput.workloads.first();
    let v = w.map(|w| w.verdict.clone());
    let single = w.and_then(|w| w.get(Mode::Single)).cloned();
    let best = w.and_then(|w| v.as_ref().and_then(|v| v.best_pair).and_then(|m| w.get(m))).cloned();
    let users = |m: &Option<ModeGoodput>| m.as_ref().map_or("0".to_string(), ModeGoodput::users_text);
    let headline = match &best {
        Some(b) => format!(
            "One machine serves {} users within the target; two serve {} as {}",
            users(&single),
            users(&best),
            b.mode.label()
        ),
        None => format!("One machine serves {} users within the target; no two-machine mode meets it", users(&single)),
    };
    let gain = v.as_ref().and_then(|v| v.users_gain).map(|g| format!("{g:.1}x the users"));
    let band = best.as_ref().map(|b| format!("tok/s band: {}", b.tok_s_band.describe()));
    let cost = best.as_ref().and_then(|b| b.cost.as_ref().map(|c| (b, c))).map_or_else(
        || "Cost per million tokens: give a price and a power of one machine.".to_string(),
        |(b, c)| {
            let one = single
                .as_ref()
                .and_then(|s| s.cost.as_ref())
                .map_or(String::new(), |s| format!(" (one machine {:.2})", s.usd_per_million_tokens));
            // The cost goes as 1 / tok/s: its band is the tok/s band inverted.
            let range = b.tok_s_band.inverted(c.usd_per_million_tokens).map_or_else(
                || ", no measured evidence for its band".to_string(),
                |(lo, hi)| format!(", {lo:.2}-{hi:.2} at {:.0}% coverage", b.tok_s_band.coverage * 100.0),
            );
            format!("Cost per million output tokens: {:.2}{range}{one}.", c.usd_per_million_tokens)
        },
    );
    let reason = v.as_ref().map(|v| v.reason.clone()).unwrap_or_default();
    let close = v.as_ref().and_then(|v| v.too_close.clone());
    let four = v.as_ref().and_then(|v| v.four_machines.as_ref()).map(|f| f.reason.clone());
    let mode = best.as_ref().map_or("", |b| b.mode.name());
    let commands = a.commands.clone().map(|c| {
        let steps = c
            .steps
            .into_iter()
            .map(|s| {
                view! {
                    <li>
                        <span>{format!("{}: {}", s.on, s.what)}</span>
                        <pre>{s.command}</pre>
                        <a href=s.doc target="_blank" rel="noopener">{s.doc}</a>
                    </li>
                }
            })
            .collect_view();
        view! {
            <details id="target-commands">
                <summary>{format!("How to run {} with vLLM", c.mode.label())}</summary>
                <ol>{steps}</ol>
                {c.notes.into_iter().map(|n| view! { <p class="hint">{n}</p> }).collect_view()}
            </details>
        }
    });
    view! {
        <div class="verdict" id="target-card" data-mode=mode role="status">
            <div class="verdict-mode">{headline}</div>
            <p class="verdict-numbers">{[gain, band].into_iter().flatten().collect::<Vec<_>>().join("; ")}</p>
            <p class="verdict-numbers" id="target-cost">{cost}</p>
            <p class="verdict-reason">{reason}</p>
            {close.map(|c| view! { <p class="verdict-reason" id="target-close">{c}</p> })}
            {four.map(|f| view! { <p class="verdict-reason" id="target-four">{f}</p> })}
            {commands}
        </div>
    }
}
