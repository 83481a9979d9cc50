//! `plan`: a scenario file, or a model, machines and a workload given as flags (written as the same scenario
//! file, `--save` keeps it); the answer per machine, opening with the verdict and how to run it.

use crate::out::{warn, Out};
use crate::{goodput, open_scenario, open_valid, read_text, render, use_kernel_tables, CliError, Format};
use clap::ValueEnum;
use sim_core::diagnostic::Diagnostic;
use sim_core::explore::memory_share::{self, Offload, ShareWarning};
use sim_core::explore::plan_request::{scenario_text, ModelSource, PlanRequest, RequestError};
use sim_core::explore::serving_commands::{serving_commands, with_serve_flags, ServingCommands};
use sim_core::explore::users::Users;
use sim_core::explore::verdict::{plan_answer, PlanAnswer};
use sim_core::explore::workloads::{workload_preset, WORKLOAD_PRESETS};
use sim_core::explore::{context, profile_choice, GoodputAnswer, ScenarioRun, Workspace};
use sim_core::fit::FitSet;
use sim_core::server::{ServerSettings, SERVER_SETTINGS};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct PlanArgs {
    /// A scenario file; or leave it out and give --model, --hardware and a workload.
    scenario: Option<PathBuf>,
    /// Dataset directory the ids refer to (default: the scenario's parent's parent; with --model, `data`).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Predict with this engine profile (an id of data/engines/, e.g. roofline) instead of the default one.
    #[arg(long)]
    engine: Option<String>,
    /// A kernel table of your GPU (`scripts/collect-kernels.py --out`), used in place of the dataset's table of
    /// that GPU; give it more than once for several GPUs.
    #[arg(long, value_name = "FILE")]
    kernels: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// vLLM's --max-model-len: the longest prompt plus output a request may have; a workload longer than it, or
    /// than the model's own context (its card's context_tokens, a config.json's max_position_embeddings), is
    /// refused.
    #[arg(long, value_name = "TOKENS")]
    max_model_len: Option<u64>,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    ask: AskArgs,
}

/// The question as flags, without a scenario file.
#[derive(clap::Args)]
pub struct AskArgs {
    /// A model id of the dataset, or a Hugging Face config.json (a path to the file or to its folder).
    #[arg(long, value_name = "ID|CONFIG")]
    model: Option<String>,
    /// A hardware id of the dataset; give it more than once to compare machines side by side.
    #[arg(long, value_name = "ID")]
    hardware: Vec<String>,
    /// A named workload (chat, rag, long-generation, agentic): its ISL and OSL, which --isl and --osl override.
    #[arg(long, value_name = "PRESET")]
    workload: Option<String>,
    /// Tokens in per request.
    #[arg(long, value_name = "TOKENS")]
    isl: Option<u32>,
    /// Tokens out per request.
    #[arg(long, value_name = "TOKENS")]
    osl: Option<u32>,
    /// Bits per weight of a config.json model (4.5 for NVFP4, 8 for FP8; default: its quantization_config).
    #[arg(long)]
    bits: Option<f64>,
    /// Comma-separated concurrency levels of the plan table, each in 1..=4096.
    #[arg(long, value_delimiter = ',', value_name = "USERS")]
    concurrency: Vec<u32>,
    /// vLLM's --kv-cache-dtype for a config.json model (auto, bf16, fp16, fp8).
    #[arg(long, value_name = "DTYPE")]
    kv_cache_dtype: Option<String>,
    /// vLLM's --gpu-memory-utilization: the engine's share of GPU memory, (0.032, 1].
    #[arg(long, value_name = "SHARE")]
    gpu_memory_utilization: Option<f64>,
    /// vLLM's --max-num-seqs: most requests running at once.
    #[arg(long, value_name = "N")]
    max_num_seqs: Option<u32>,
    /// vLLM's --max-num-batched-tokens: most tokens one engine step takes.
    #[arg(long, value_name = "TOKENS")]
    max_num_batched_tokens: Option<u32>,
    /// vLLM's --block-size: tokens per KV cache block.
    #[arg(long, value_name = "TOKENS")]
    block_size: Option<u32>,
    /// vLLM's --cpu-offload-gb: GiB of weights per GPU kept in CPU memory. Without it, weights beyond the memory
    /// share are planned with the offload the printed commands set.
    #[arg(long, value_name = "GIB")]
    cpu_offload_gb: Option<f64>,
    /// Machines to plan for: 2 (one machine against a pair) or 4 (adds TP4, PP4 and four copies). A scenario
    /// file names four-machine modes in its `modes` instead.
    #[arg(long, value_name = "N", default_value_t = 2)]
    machines: u32,
    /// Write the scenario file these flags ask (`plan <file>` then gives the same answer).
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
}

impl AskArgs {
    fn server(&self) -> ServerSettings {
        ServerSettings {
            gpu_memory_utilization: self.gpu_memory_utilization.unwrap_or(0.0),
            max_num_seqs: self.max_num_seqs.map_or(0.0, f64::from),
            max_num_batched_tokens: self.max_num_batched_tokens.map_or(0.0, f64::from),
            block_size: self.block_size.map_or(0.0, f64::from),
        }
    }

    /// The first flag given that only a flag-asked plan reads.
    fn first_given(&self) -> Option<&'static str> {
        let given = [
            ("--workload", self.workload.is_some()),
            ("--isl", self.isl.is_some()),
            ("--osl", self.osl.is_some()),
            ("--bits", self.bits.is_some()),
            ("--concurrency", !self.concurrency.is_empty()),
            ("--kv-cache-dtype", self.kv_cache_dtype.is_some()),
            ("--gpu-memory-utilization", self.gpu_memory_utilization.is_some()),
            ("--max-num-seqs", self.max_num_seqs.is_some()),
            ("--max-num-batched-tokens", self.max_num_batched_tokens.is_some()),
            ("--block-size", self.block_size.is_some()),
            ("--cpu-offload-gb", self.cpu_offload_gb.is_some()),
            ("--machines", self.machines != 2),
            ("--save", self.save.is_some()),
        ];
        given.into_iter().find(|(_, g)| *g).map(|(f, _)| f)
    }
}

/// One machine's answer.
struct Answer {
    hardware: String,
    run: ScenarioRun,
    plan: sim_core::plan::Plan,
    goodput: Option<GoodputAnswer>,
    /// The one mode, its multiplier in one sentence, and the modes too close to call with it.
    one: PlanAnswer,
    /// How to run the answer's mode, then each mode too close to call with it.
    commands: Vec<ServingCommands>,
    /// Weights kept in CPU memory, with the `--cpu-offload-gb` the commands set.
    offloads: Vec<Offload>,
    share_warning: Option<ShareWarning>,
    /// Why a plan asked by flags uses its engine profile.
    profile: Option<String>,
}

pub fn run(args: PlanArgs, out: &mut Out) -> Result<u8, CliError> {
    // A question the model cannot answer is refused before any file is read.
    let query = args.target.query()?;
    if let Some(q) = &query {
        q.target.check().map_err(|e| CliError::Usage(e.to_string()))?;
    }
    let asked = args.ask.model.is_some() || !args.ask.hardware.is_empty();
    let answers = match (&args.scenario, asked) {
        (Some(_), true) => {
            return Err(CliError::Usage(
                "give a scenario file or --model and --hardware, not both (a scenario file names its own)".into(),
            ))
        }
        (None, false) => {
            return Err(CliError::Usage(
                "plan needs a scenario file, or --model and --hardware with a workload (--workload or --isl and \
                 --osl)"
                    .into(),
            ))
        }
        (Some(path), false) => {
            if let Some(flag) = args.ask.first_given() {
                let keys = if flag == "--cpu-offload-gb" {
                    format!("{} in bytes per GPU", sim_core::explore::plan_request::CPU_OFFLOAD_KEY)
                } else {
                    SERVER_SETTINGS.map(|s| s.key).join(", ")
                };
                return Err(CliError::Usage(format!(
                    "{flag} is for a plan asked with --model and --hardware; a scenario file states it itself (as an \
                     override: {keys})"
                )));
            }
            let (ws, mut run) = open_scenario(path, args.data.clone(), FitSet::All, &args.kernels)?;
            if let Some(e) = &args.engine {
                run = ws.with_engine(run, e).map_err(CliError::Usage)?;
            }
            // A workload longer than the model's context is a finding about the file, at its line.
            if let Some(file) = &run.file {
                let refused =
                    context::scenario_refusals(&ws.dataset, &path.display().to_string(), &read_text(path)?, file);
                if !refused.is_empty() {
                    return Err(CliError::Invalid(refused));
                }
                let limit = context::of_scenario(&ws.dataset, file);
                for w in &run.scenario.workloads {
                    context::check(w.isl, w.osl, limit.as_ref(), args.max_model_len)
                        .map_err(|e| CliError::Usage(e.to_string()))?;
                }
            }
            let model = format!("<{} checkpoint>", run.scenario.model.id);
            vec![answer(&ws, run, query.as_ref(), &args, &model, None)?]
        }
        (None, true) => asked_by_flags(&args, query.as_ref())?,
    };
    print(out, args.format, &answers);
    Ok(0)
}

/// The plan of each `--hardware` for the model and workload the flags give.
fn asked_by_flags(args: &PlanArgs, query: Option<&sim_core::explore::GoodputQuery>) -> Result<Vec<Answer>, CliError> {
    let ask = &args.ask;
    let usage = |s: String| CliError::Usage(s);
    let Some(model_arg) = &ask.model else {
        return Err(usage("--model is missing: a model id or a config.json".into()));
    };
    if ask.hardware.is_empty() {
        return Err(usage("--hardware is missing: a hardware id (more than one compares them)".into()));
    }
    if ask.save.is_some() && ask.hardware.len() > 1 {
        return Err(usage("--save writes one scenario: give one --hardware with it".into()));
    }
    let preset =
        ask.workload.as_deref().map(workload_preset).transpose().map_err(|e| usage(format!("--workload: {e}")))?;
    let isl = ask.isl.or(preset.map(|w| w.isl));
    let osl = ask.osl.or(preset.map(|w| w.osl));
    let (Some(isl), Some(osl)) = (isl, osl) else {
        let presets: Vec<&str> = WORKLOAD_PRESETS.iter().map(|w| w.id).collect();
        return Err(usage(format!("--isl and --osl are missing: give both, or --workload ({})", presets.join(", "))));
    };
    let max = sim_core::scenario::MAX_CONCURRENCY;
    if let Some(bad) = ask.concurrency.iter().find(|c| **c == 0 || **c > max) {
        return Err(usage(format!("--concurrency {bad}: outside 1..={max}")));
    }
    let (model, serve_as) = model_source(model_arg)?;
    let data = args.data.clone().unwrap_or_else(|| PathBuf::from("data"));
    let mut ws = open_valid(&data)?;
    use_kernel_tables(&mut ws, &args.kernels)?;
    // A request longer than the model's context, or a --max-model-len above it, vLLM refuses: so does the plan.
    let limit = match &model {
        ModelSource::Id(id) => ws.dataset.models.get(id).and_then(context::of_card),
        ModelSource::HfConfig { text, .. } => context::of_config(text),
    };
    context::check(isl, osl, limit.as_ref(), args.max_model_len).map_err(|e| {
        let flag = if matches!(e, context::ContextRefusal::MaxModelLen { .. }) {
            "--max-model-len"
        } else {
            "--isl and --osl"
        };
        usage(format!("{flag}: {e}"))
    })?;
    let mut answers = Vec::new();
    for hardware in &ask.hardware {
        // Without --engine: the build measured with this model on this machine, else the machine's default.
        let choice = match &model {
            ModelSource::Id(id) => profile_choice::choose(&ws.dataset, hardware, Some(id)),
            ModelSource::HfConfig { .. } => profile_choice::choose(&ws.dataset, hardware, None),
        };
        let (engine, profile) = match &args.engine {
            Some(e) => (Some(e.clone()), None),
            None if ws.dataset.hardware.contains_key(hardware) => (Some(choice.engine), Some(choice.why)),
            None => (None, None),
        };
        let request = PlanRequest {
            model: model.clone(),
            hardware: hardware.clone(),
            engine,
            isl,
            osl,
            bits: ask.bits,
            kv_cache_dtype: ask.kv_cache_dtype.clone(),
            concurrency: ask.concurrency.clone(),
            server: ask.server(),
            cpu_offload_gb: ask.cpu_offload_gb,
            machines: ask.machines,
        };
        let id = match &model {
            ModelSource::Id(id) | ModelSource::HfConfig { id, .. } => format!("plan-{id}-{hardware}"),
        };
        let file = request.scenario_file(&id).map_err(|e| flag_error(&e))?;
        let text = scenario_text(&file);
        let name = ask.save.as_ref().map_or_else(|| format!("--hardware {hardware}"), |p| p.display().to_string());
        let run =
            ws.scenario_from_text(&name, &text, FitSet::All).map_err(|d| flag_diagnostics(d, model_arg, hardware))?;
        if let Some(path) = &ask.save {
            std::fs::write(path, &text).map_err(|e| usage(format!("--save {}: {e}", path.display())))?;
            warn(&format!("wrote {} (`{}` asks the same)", path.display(), replay(path, &data, args).join(" ")));
        }
        answers.push(answer(&ws, run, query, args, &serve_as, profile)?);
    }
    Ok(answers)
}

/// The command that asks a saved scenario the same question: `sim-core plan <file>`, with `--data` where the
/// file's grandparent folder is not the dataset the flags used, and every flag the file cannot hold (the target,
/// the prices, the users, `--max-model-len`).
fn replay(path: &Path, data: &Path, args: &PlanArgs) -> Vec<String> {
    let mut out = vec!["sim-core".to_string(), "plan".into(), path.display().to_string()];
    let same = |a: &Path, b: &Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
    let grandparent = path.parent().and_then(Path::parent).filter(|g| !g.as_os_str().is_empty());
    if !grandparent.is_some_and(|g| same(g, data)) {
        out.extend(["--data".into(), data.display().to_string()]);
    }
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            out.extend([name.to_string(), v]);
        }
    };
    let t = &args.target;
    let num = |x: Option<f64>| x.map(|v| v.to_string());
    flag("--slo-ttft", num(t.slo_ttft));
    flag("--slo-tpot", num(t.slo_tpot));
    flag("--slo-stat", t.slo_stat.and_then(|s| s.to_possible_value()).map(|v| v.get_name().to_string()));
    flag("--max-users", (t.max_users != sim_core::explore::target::MAX_USERS).then(|| t.max_users.to_string()));
    flag("--users", t.users.map(|u| u.to_string()));
    flag("--think-time", num(t.think_time));
    flag("--request-rate-per-user", num(t.request_rate_per_user));
    flag("--price", num(t.price));
    flag("--power-w", num(t.power_w));
    let given = |x: f64, default: f64| (x != default).then(|| x.to_string());
    use sim_core::explore::cost;
    flag("--amortize-years", given(t.amortize_years, cost::DEFAULT_AMORTIZATION_YEARS));
    flag("--electricity-per-kwh", given(t.electricity_per_kwh, cost::DEFAULT_ELECTRICITY_USD_PER_KWH));
    flag("--utilization", given(t.utilization, cost::DEFAULT_UTILIZATION));
    flag("--max-model-len", args.max_model_len.map(|n| n.to_string()));
    out
}

/// The model a `--model` value names, and how `vllm serve` names it: a dataset id, or a config.json (the file or
/// its folder) served from its folder.
fn model_source(arg: &str) -> Result<(ModelSource, String), CliError> {
    let path = Path::new(arg);
    let config = if path.is_dir() { path.join("config.json") } else { path.to_path_buf() };
    if config.is_file() {
        let text = read_text(&config)?;
        let folder = config.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let id = folder.file_name().map_or_else(|| "model".to_string(), |n| n.to_string_lossy().into_owned());
        return Ok((ModelSource::HfConfig { id, text }, folder.display().to_string()));
    }
    if arg.ends_with(".json") || arg.contains('/') {
        return Err(CliError::Usage(format!("--model {arg}: no such file (a model id or a config.json)")));
    }
    Ok((ModelSource::Id(arg.to_string()), format!("<{arg} checkpoint>")))
}

/// A request the flags cannot make, named by its flag.
fn flag_error(e: &RequestError) -> CliError {
    let flag = match e.field.as_str() {
        "kv_cache_dtype" => "--kv-cache-dtype".to_string(),
        f => SERVER_SETTINGS
            .iter()
            .find(|s| s.key == f)
            .map_or_else(|| format!("--{}", f.replace('_', "-")), |s| s.flag.to_string()),
    };
    CliError::Usage(format!("{flag}: {}", e.message))
}

/// A scenario the flags wrote that does not resolve: an unknown model or hardware id is the flag's usage error,
/// with the known ids the resolver lists; anything else is a finding about the data.
fn flag_diagnostics(diags: Vec<Diagnostic>, model: &str, hardware: &str) -> CliError {
    let flagged = |d: &Diagnostic| match d.pointer.as_str() {
        "/model" => Some(format!("--model {model}")),
        "/hardware" => Some(format!("--hardware {hardware}")),
        "/engine" => Some("--engine".to_string()),
        _ => None,
    };
    if let Some((d, flag)) = diags.iter().find_map(|d| flagged(d).map(|f| (d, f))) {
        let hint = d.hint.as_deref().map_or(String::new(), |h| format!(" ({h})"));
        return CliError::Usage(format!("{flag}: {}{hint}", d.message));
    }
    CliError::Invalid(diags)
}

/// Plan, goodput, the one answer and the commands of its modes for one resolved scenario.
fn answer(
    ws: &Workspace,
    run: ScenarioRun,
    query: Option<&sim_core::explore::GoodputQuery>,
    args: &PlanArgs,
    serve_as: &str,
    profile: Option<String>,
) -> Result<Answer, CliError> {
    let mut query = query.cloned();
    if let Some(q) = &mut query {
        // Without --price and --power-w, the machine's own file may list them (`HardwareFile::cost`).
        let listed = ws.dataset.hardware.get(&run.scenario.hardware.id).and_then(sim_core::explore::cost::listed);
        if let (None, Some((price, power))) = (&q.cost, listed) {
            warn(&format!(
                "note: costs use {}'s listed price {price} and power {power} W (--price and --power-w override \
                 them)",
                run.scenario.hardware.id
            ));
            q.cost = Some(args.target.cost_inputs(price, power));
        }
    }
    let goodput = match &query {
        Some(q) => Some(ws.goodput(&run, q).map_err(|e| CliError::Usage(e.to_string()))?),
        None => None,
    };
    let plan = ws.plan_of(&run);
    let one = plan_answer(&plan, goodput.as_ref());
    let offloads = memory_share::offloads(&run);
    let share_warning = ws.memory_share_warning(&run, query.as_ref());
    let gpus = run.scenario.hardware.gpus.max(1.0).round() as u32;
    let commands = one
        .mode
        .into_iter()
        .chain(one.too_close_with.iter().copied())
        .map(|m| {
            let mut flags = memory_share::serve_flags(&run, &offloads, m);
            if let Some(n) = args.max_model_len {
                flags.push(format!("--max-model-len {n}"));
            }
            with_serve_flags(serving_commands(m, serve_as, gpus, &run.scenario.server), &flags)
        })
        .collect();
    Ok(Answer {
        hardware: run.scenario.hardware.id.clone(),
        run,
        plan,
        goodput,
        one,
        commands,
        offloads,
        share_warning,
        profile,
    })
}

fn print(out: &mut Out, format: Format, answers: &[Answer]) {
    if format == Format::Json {
        let all: Vec<serde_json::Value> = answers
            .iter()
            .map(|a| {
                let note = a.run.calibration_note();
                let text = render::plan_json(&a.plan, note.as_deref(), a.goodput.as_ref());
                let mut v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    let value = |x: serde_json::Result<serde_json::Value>| x.unwrap_or_default();
                    o.insert("hardware".into(), a.hardware.clone().into());
                    o.insert("answer".into(), value(serde_json::to_value(&a.one)));
                    o.insert("serving_commands".into(), value(serde_json::to_value(a.commands.first())));
                    if a.commands.len() > 1 {
                        o.insert("too_close_serving_commands".into(), value(serde_json::to_value(&a.commands[1..])));
                    }
                    if !a.offloads.is_empty() {
                        o.insert("offloads".into(), value(serde_json::to_value(&a.offloads)));
                    }
                    if let Some(w) = &a.share_warning {
                        o.insert("memory_share_warning".into(), value(serde_json::to_value(w)));
                    }
                }
                v
            })
            .collect();
        // One machine keeps the single object it always printed; several are an array.
        match all.as_slice() {
            [one] => out.line(&render::json(one)),
            many => out.line(&render::json(many)),
        }
        return;
    }
    // Why a plan asked by flags uses its profile: a note, so that the saved scenario (which names the profile)
    // answers the same on stdout.
    for a in answers {
        if let Some(p) = &a.profile {
            warn(&format!("note: {}: engine profile {p}", a.hardware));
        }
    }
    if answers.len() > 1 && format == Format::Table {
        let rows = answers.iter().map(|a| (a.hardware.as_str(), &a.plan, a.goodput.as_ref(), &a.one));
        for line in goodput::comparison(rows) {
            out.line(&line);
        }
    }
    for a in answers {
        let note = a.run.calibration_note();
        if format == Format::Table {
            if answers.len() > 1 {
                out.line(&format!("== {} ==", a.hardware));
            }
            match &a.goodput {
                Some(g) => goodput::summary(g).iter().for_each(|l| out.line(l)),
                None => render::plan_verdict(&a.plan).iter().for_each(|l| out.line(l)),
            }
            for line in render::plan_notes(&a.offloads, a.share_warning.as_ref()) {
                out.line(&line);
            }
            // How to run the answer comes with it (and each mode too close to call with it); the
            // per-concurrency details follow.
            if a.commands.len() > 1 {
                out.line(&format!(
                    "too close to call: the commands of {} follow",
                    a.commands.iter().map(|c| c.mode.name()).collect::<Vec<_>>().join(" and ")
                ));
            }
            for c in &a.commands {
                for line in render::serving_commands(c) {
                    out.line(&line);
                }
            }
        }
        out.table(&render::plan_table(&a.plan), format == Format::Csv, false);
        if format == Format::Table {
            for line in render::plan_summary(&a.plan, note.as_deref(), &a.one.headline) {
                out.line(&line);
            }
        }
    }
}

/// `plan`'s latency target and prices. With a target, the table opens with the users each mode serves within it
/// (and the JSON carries them under `goodput`); the bands it prints run the accuracy protocol's rows for the
/// closest measured case, which takes seconds to a minute.
#[derive(clap::Args)]
pub struct TargetArgs {
    /// Latency target: time to first token, seconds.
    #[arg(long, value_name = "SECONDS")]
    slo_ttft: Option<f64>,
    /// Latency target: time per output token, milliseconds.
    #[arg(long, value_name = "MS")]
    slo_tpot: Option<f64>,
    /// Which statistic of the latencies the target holds (default mean). p50, p90 and p99 read the requests of
    /// `vllm bench serve --request-rate inf --max-concurrency <users> --num-prompts <10 x users, at least 100>`.
    #[arg(long, value_enum)]
    slo_stat: Option<StatArg>,
    /// The highest load (users) the search tries.
    #[arg(long, default_value_t = sim_core::explore::target::MAX_USERS, value_name = "USERS")]
    max_users: u32,
    /// The load you plan for, users: each mode's latencies and cost there, and the mode to run at it.
    #[arg(long, value_name = "USERS")]
    users: Option<u32>,
    /// Seconds a user reads and types after each answer before asking again: users are then people, answered
    /// through the open loop (without it, a user is a stream that asks again the moment its answer ends).
    #[arg(long, value_name = "SECONDS", conflicts_with = "request_rate_per_user")]
    think_time: Option<f64>,
    /// Requests a second each user sends whatever the answers do (open loop), instead of a think time.
    #[arg(long, value_name = "PER_SECOND")]
    request_rate_per_user: Option<f64>,
    /// Price of one machine (any currency; the output's costs are in the same one). Needs --power-w.
    #[arg(long, value_name = "PER_MACHINE")]
    price: Option<f64>,
    /// Power one machine draws, watts; assumed drawn all the time, idle or busy.
    #[arg(long, value_name = "WATTS")]
    power_w: Option<f64>,
    /// Years the price is spread over.
    #[arg(long, default_value_t = sim_core::explore::cost::DEFAULT_AMORTIZATION_YEARS, value_name = "YEARS")]
    amortize_years: f64,
    /// Electricity price per kWh, in the price's currency.
    #[arg(long, default_value_t = sim_core::explore::cost::DEFAULT_ELECTRICITY_USD_PER_KWH, value_name = "PRICE")]
    electricity_per_kwh: f64,
    /// Share of the time the machines serve at the predicted rate. An assumption, stated: traffic has peaks and
    /// troughs, and machines sized for the peak idle part of the day; 0.6 unless you know your own.
    #[arg(long, default_value_t = sim_core::explore::cost::DEFAULT_UTILIZATION, value_name = "SHARE")]
    utilization: f64,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
pub enum StatArg {
    Mean,
    P50,
    P90,
    P99,
}

impl TargetArgs {
    /// A machine's price and power with the amortisation, electricity and utilisation the flags give.
    pub fn cost_inputs(&self, price: f64, power_w: f64) -> sim_core::explore::cost::CostInputs {
        sim_core::explore::cost::CostInputs {
            machine_price_usd: price,
            machine_power_w: power_w,
            amortization_years: self.amortize_years,
            electricity_usd_per_kwh: self.electricity_per_kwh,
            utilization: self.utilization,
        }
    }

    /// The goodput question, or `None` without a target; prices without a target, or a price without power,
    /// are usage errors.
    pub fn query(&self) -> Result<Option<sim_core::explore::GoodputQuery>, CliError> {
        use sim_core::explore::{GoodputQuery, LatencyStatistic, LatencyTarget};
        let any_target = self.slo_ttft.is_some() || self.slo_tpot.is_some() || self.slo_stat.is_some();
        if !any_target {
            if self.price.is_some() || self.power_w.is_some() {
                return Err(CliError::Usage(
                    "--price and --power-w need a latency target (--slo-ttft or --slo-tpot)".into(),
                ));
            }
            let users = [
                ("--users", self.users.is_some()),
                ("--think-time", self.think_time.is_some()),
                ("--request-rate-per-user", self.request_rate_per_user.is_some()),
            ];
            if let Some((flag, _)) = users.iter().find(|(_, given)| *given) {
                return Err(CliError::Usage(format!(
                    "{flag} needs a latency target (--slo-ttft or --slo-tpot): users are counted by whether they are \
                     served within it"
                )));
            }
            return Ok(None);
        }
        let users = match (self.think_time, self.request_rate_per_user) {
            (Some(think_s), _) => Users::Thinking { think_s },
            (None, Some(requests_per_s)) => Users::Paced { requests_per_s },
            (None, None) => Users::Streams,
        };
        users.check().map_err(|e| {
            let flag = if self.think_time.is_some() { "--think-time" } else { "--request-rate-per-user" };
            CliError::Usage(format!("{flag}: {e}"))
        })?;
        if self.users == Some(0) {
            return Err(CliError::Usage("--users 0: plan for at least one user".into()));
        }
        let statistic = match self.slo_stat.unwrap_or(StatArg::Mean) {
            StatArg::Mean => LatencyStatistic::Mean,
            StatArg::P50 => LatencyStatistic::P50,
            StatArg::P90 => LatencyStatistic::P90,
            StatArg::P99 => LatencyStatistic::P99,
        };
        let cost = match (self.price, self.power_w) {
            (Some(price), Some(power)) => Some(self.cost_inputs(price, power)),
            (None, None) => None,
            _ => return Err(CliError::Usage("--price and --power-w go together: a cost needs both".into())),
        };
        Ok(Some(GoodputQuery {
            target: LatencyTarget { ttft_s: self.slo_ttft, tpot_s: self.slo_tpot.map(|ms| ms / 1e3), statistic },
            max_users: self.max_users,
            cost,
            users,
            asked_users: self.users,
        }))
    }
}
