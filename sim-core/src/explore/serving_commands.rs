//! How to run a mode: the commands a team types to serve it with vLLM, each step with the vLLM documentation
//! page it follows. Data, not text: the CLI prints the steps and the page shows them under its verdict.
//!
//! ```text
//! single  machine 1: vllm serve --tensor-parallel-size g
//! tp2     both: NCCL env; machine 1: ray start --head; machine 2: ray start --address; machine 1: vllm serve
//!         --tensor-parallel-size 2g --distributed-executor-backend ray
//! pd      machine 1: vllm serve (kv_producer); machine 2: vllm serve (kv_consumer); proxy: prefill then decode
//! dp2     machine 1 and 2: vllm serve each; a round-robin router in front
//! dpep2   both: NCCL env; machine 1: vllm serve --data-parallel-size 2 --enable-expert-parallel; machine 2: the
//!         same, --data-parallel-start-rank 1 --headless
//! tp4/pp4 as tp2/pp2, machines 2 to 4 joining the Ray cluster; dp4 as dp2 with four copies
//! ```
//! Placeholders in angle brackets (`<machine-1-ip>`, `<link-interface>`) are the team's own: the dataset knows
//! the link's speed, not its interface names.

use crate::server::ServerSettings;
use crate::Mode;
use serde::Serialize;

/// vLLM's multi-node page: Ray cluster, tensor and pipeline parallel sizes, the executor backend, NCCL_IB_HCA.
pub const DOC_MULTI_NODE: &str = "https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html";
/// vLLM's troubleshooting page for distributed runs: NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, VLLM_HOST_IP.
pub const DOC_DISTRIBUTED_TROUBLESHOOTING: &str =
    "https://docs.vllm.ai/en/latest/serving/distributed_troubleshooting.html";
/// vLLM's NixlConnector guide: --kv-transfer-config, kv_producer and kv_consumer, the side channel, the proxy.
pub const DOC_NIXL: &str = "https://docs.vllm.ai/en/latest/features/nixl_connector_usage.html";
/// vLLM's disaggregated prefilling page.
pub const DOC_DISAGG_PREFILL: &str = "https://docs.vllm.ai/en/latest/features/disagg_prefill.html";
/// vLLM's page on an nginx load balancer in front of several vLLM servers.
pub const DOC_NGINX: &str = "https://docs.vllm.ai/en/latest/deployment/nginx.html";
/// vLLM's data-parallel deployment page: --data-parallel-size, -local, -address, -rpc-port, --headless.
pub const DOC_DATA_PARALLEL: &str = "https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html";
/// vLLM's `vllm serve` page (engine arguments).
pub const DOC_SERVE: &str = "https://docs.vllm.ai/en/latest/cli/serve.html";

/// One step: where it runs, what it does, the command, and the page it follows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingStep {
    /// `machine 1`, `machine 2`, `both machines`, `router host`.
    pub on: String,
    pub what: String,
    pub command: String,
    pub doc: &'static str,
}

/// The commands of one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingCommands {
    pub mode: Mode,
    pub steps: Vec<ServingStep>,
    /// What the commands do not settle (placeholders, choices the prediction did not make).
    pub notes: Vec<String>,
}

/// The commands that serve `model` (a Hugging Face id or path) in `mode` on machines of `gpus_per_machine` GPUs
/// with the team's `server` settings.
pub fn serving_commands(mode: Mode, model: &str, gpus_per_machine: u32, server: &ServerSettings) -> ServingCommands {
    let g = gpus_per_machine.max(1);
    let settings = server.vllm_args();
    let serve = |extra: &[String]| {
        let mut parts = vec![format!("vllm serve {model}")];
        parts.extend(extra.iter().cloned());
        parts.extend(settings.iter().cloned());
        parts.join(" \\\n    ")
    };
    let step = |on: &str, what: &str, command: String, doc: &'static str| ServingStep {
        on: on.into(),
        what: what.into(),
        command,
        doc,
    };
    let nccl_env = step(
        "both machines",
        "name the interface on the link between the machines for NCCL and Gloo, and the RDMA device when the link \
         has one (leave NCCL_IB_HCA out on plain Ethernet)",
        "export NCCL_SOCKET_IFNAME=<link-interface> GLOO_SOCKET_IFNAME=<link-interface> \\\n    \
         NCCL_IB_HCA=<rdma-device> VLLM_HOST_IP=<this-machine-ip-on-the-link>"
            .into(),
        DOC_DISTRIBUTED_TROUBLESHOOTING,
    );
    let mut notes = Vec::new();
    let steps = match mode {
        Mode::Single => vec![step(
            "machine 1",
            "one engine over the machine's GPUs",
            serve(&[format!("--tensor-parallel-size {g}")]),
            DOC_SERVE,
        )],
        Mode::Tp2 | Mode::Pp2 | Mode::Ep2 | Mode::Tp4 | Mode::Pp4 => {
            let machines = mode.machines();
            let (what, flags) = match mode {
                Mode::Pp2 => (
                    "one engine, half of the layers on each machine",
                    vec![format!("--tensor-parallel-size {g}"), "--pipeline-parallel-size 2".into()],
                ),
                Mode::Pp4 => (
                    "one engine, a quarter of the layers on each machine",
                    vec![format!("--tensor-parallel-size {g}"), "--pipeline-parallel-size 4".into()],
                ),
                Mode::Tp4 => (
                    "one engine over all four machines",
                    vec![format!("--tensor-parallel-size {}", 4 * g), "--pipeline-parallel-size 1".into()],
                ),
                Mode::Ep2 => (
                    "one engine over both machines, the routed experts split between them",
                    vec![
                        format!("--tensor-parallel-size {}", 2 * g),
                        "--pipeline-parallel-size 1".into(),
                        "--enable-expert-parallel".into(),
                    ],
                ),
                _ => (
                    "one engine over both machines",
                    vec![format!("--tensor-parallel-size {}", 2 * g), "--pipeline-parallel-size 1".into()],
                ),
            };
            if mode == Mode::Ep2 {
                // What the prediction charges is what this command runs: vLLM's all-to-all kernels need data
                // parallel > 1 (`FusedMoEParallelConfig.use_all2all_kernels`, fused_moe/config.py).
                notes.push(
                    "expert parallel inside one tensor-parallel engine (data parallel 1): each GPU holds whole \
                     experts and vLLM all-reduces the MoE output over the tensor-parallel group, with no all-to-all \
                     (its all-to-all kernels run only with --data-parallel-size above 1); the prediction charges \
                     that all-reduce"
                        .into(),
                );
            }
            if mode == Mode::Tp2 {
                notes.push(format!(
                    "the prediction is one engine tensor-parallel over all {} GPUs of both machines; vLLM's page \
                     also describes --tensor-parallel-size {g} --pipeline-parallel-size 2 across machines, which is \
                     the pp2 mode",
                    2 * g
                ));
            }
            if mode == Mode::Tp4 {
                notes.push(format!(
                    "the prediction is one engine tensor-parallel over all {} GPUs of the four machines, each \
                     machine's link into one switch at the link's rate",
                    4 * g
                ));
            }
            let mut flags = flags;
            flags.push("--distributed-executor-backend ray".into());
            let nccl_env =
                ServingStep { on: if machines > 2 { "every machine".into() } else { nccl_env.on }, ..nccl_env };
            let mut steps = vec![
                nccl_env,
                step("machine 1", "start the Ray head", "ray start --head --port=6379".into(), DOC_MULTI_NODE),
            ];
            for joining in 2..=machines {
                steps.push(step(
                    &format!("machine {joining}"),
                    "join the Ray cluster",
                    "ray start --address=<machine-1-ip>:6379".into(),
                    DOC_MULTI_NODE,
                ));
            }
            steps.push(step("machine 1", what, serve(&flags), DOC_MULTI_NODE));
            steps
        }
        Mode::Pd => {
            let kv = |role: &str| {
                format!("--kv-transfer-config '{{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"{role}\"}}'")
            };
            let side = |ip: &str| {
                format!(
                    "UCX_NET_DEVICES=<rdma-device> \\\nVLLM_NIXL_SIDE_CHANNEL_HOST={ip} VLLM_NIXL_SIDE_CHANNEL_PORT=5600"
                )
            };
            notes.push(
                "NixlConnector moves the KV cache over UCX, not NCCL: UCX_NET_DEVICES names the link's device \
                 (`all` lets UCX choose)"
                    .into(),
            );
            vec![
                step(
                    "machine 1",
                    "the prefill engine (KV producer)",
                    format!(
                        "{} \\\n{}",
                        side("<machine-1-ip>"),
                        serve(&["--port 8100".into(), format!("--tensor-parallel-size {g}"), kv("kv_producer")])
                    ),
                    DOC_NIXL,
                ),
                step(
                    "machine 2",
                    "the decode engine (KV consumer)",
                    format!(
                        "{} \\\n{}",
                        side("<machine-2-ip>"),
                        serve(&["--port 8200".into(), format!("--tensor-parallel-size {g}"), kv("kv_consumer")])
                    ),
                    DOC_NIXL,
                ),
                step(
                    "router host",
                    "the proxy that sends each request to prefill, then to decode (vLLM's example proxy)",
                    "python tests/v1/kv_connector/nixl_integration/toy_proxy_server.py --port 8000 \\\n    \
                     --prefiller-hosts <machine-1-ip> --prefiller-ports 8100 \\\n    \
                     --decoder-hosts <machine-2-ip> --decoder-ports 8200"
                        .into(),
                    DOC_DISAGG_PREFILL,
                ),
            ]
        }
        Mode::Dpep2 => {
            notes.push(
                "vLLM's own data parallelism: each machine's rank has its own requests and KV, its API server on \
                 machine 1 balances them, and every MoE layer exchanges all tokens between the ranks (all-gather \
                 and reduce-scatter, vLLM's default --all2all-backend allgather_reducescatter), as the prediction \
                 charges"
                    .into(),
            );
            let rank = |start: Option<u32>| {
                let mut flags = vec![
                    format!("--tensor-parallel-size {g}"),
                    "--data-parallel-size 2".into(),
                    "--data-parallel-size-local 1".into(),
                    "--data-parallel-address <machine-1-ip>".into(),
                    "--data-parallel-rpc-port 13345".into(),
                    "--enable-expert-parallel".into(),
                ];
                if let Some(r) = start {
                    flags.push(format!("--data-parallel-start-rank {r}"));
                    flags.push("--headless".into());
                }
                serve(&flags)
            };
            vec![
                nccl_env,
                step("machine 1", "data-parallel rank 0 and the API server", rank(None), DOC_DATA_PARALLEL),
                step("machine 2", "data-parallel rank 1, headless", rank(Some(1)), DOC_DATA_PARALLEL),
            ]
        }
        Mode::Dp2 => {
            notes.push(
                "two independent engines: not vLLM's --data-parallel-size, whose ranks of a MoE model step \
                 together; the prediction assumes the router gives each copy half of the clients (round robin or \
                 least connections)"
                    .into(),
            );
            vec![
                step(
                    "machine 1",
                    "the first copy",
                    serve(&["--port 8000".into(), format!("--tensor-parallel-size {g}")]),
                    DOC_SERVE,
                ),
                step(
                    "machine 2",
                    "the second copy",
                    serve(&["--port 8000".into(), format!("--tensor-parallel-size {g}")]),
                    DOC_SERVE,
                ),
                step(
                    "router host",
                    "a least-connections router over both (nginx, as vLLM's page sets it up)",
                    "upstream vllm { least_conn; server <machine-1-ip>:8000; server <machine-2-ip>:8000; }".into(),
                    DOC_NGINX,
                ),
            ]
        }
        Mode::Dp4 => {
            notes.push(
                "four independent engines: not vLLM's --data-parallel-size; the prediction assumes the router gives \
                 each copy a quarter of the clients (round robin or least connections)"
                    .into(),
            );
            let mut steps: Vec<ServingStep> = (1..=4)
                .map(|i| {
                    step(
                        &format!("machine {i}"),
                        "one copy",
                        serve(&["--port 8000".into(), format!("--tensor-parallel-size {g}")]),
                        DOC_SERVE,
                    )
                })
                .collect();
            steps.push(step(
                "router host",
                "a least-connections router over the four (nginx, as vLLM's page sets it up)",
                "upstream vllm { least_conn; server <machine-1-ip>:8000; server <machine-2-ip>:8000;\n    \
                 server <machine-3-ip>:8000; server <machine-4-ip>:8000; }"
                    .into(),
                DOC_NGINX,
            ));
            steps
        }
    };
    ServingCommands { mode, steps, notes }
}

/// The commands with `flags` added to every `vllm serve` (`--cpu-offload-gb 40`, `--max-model-len 8192`): the
/// settings a plan predicted with that are not the team's server settings.
pub fn with_serve_flags(mut c: ServingCommands, flags: &[String]) -> ServingCommands {
    for step in c.steps.iter_mut().filter(|s| s.command.contains("vllm serve")) {
        for f in flags {
            step.command.push_str(" \\\n    ");
            step.command.push_str(f);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_join_every_vllm_serve_and_nothing_else() {
        let c = with_serve_flags(serving_commands(Mode::Pd, "m", 1, &ServerSettings::default()), &["--x 1".into()]);
        let serves = c.steps.iter().filter(|s| s.command.contains("vllm serve")).count();
        assert_eq!(serves, 2);
        assert_eq!(c.steps.iter().filter(|s| s.command.ends_with(" \\\n    --x 1")).count(), serves);
    }

    #[test]
    fn every_mode_has_steps_each_with_its_page() {
        let server = ServerSettings { max_num_seqs: 64.0, ..Default::default() };
        for mode in Mode::EVERY {
            let c = serving_commands(mode, "openai/gpt-oss-120b", 1, &server);
            assert!(!c.steps.is_empty(), "{mode:?}");
            // Printed indented by four, every line fits 100 columns.
            assert!(c.steps.iter().flat_map(|s| s.command.lines()).all(|l| l.len() <= 96), "{mode:?}: {c:?}");
            assert!(c.steps.iter().all(|s| s.doc.starts_with("https://docs.vllm.ai/")), "{mode:?}");
            let serves: Vec<&ServingStep> = c.steps.iter().filter(|s| s.command.contains("vllm serve")).collect();
            assert!(serves.iter().all(|s| s.command.contains("--max-num-seqs 64")), "{mode:?}: the team's settings");
        }
    }

    #[test]
    fn ep2_runs_expert_parallel_inside_one_tensor_parallel_engine_as_predicted() {
        let ep2 = serving_commands(Mode::Ep2, "m", 1, &ServerSettings::default());
        let serve = ep2.steps.iter().find(|s| s.command.contains("vllm serve")).expect("a vllm serve step");
        assert!(
            serve.command.contains("--tensor-parallel-size 2") && serve.command.contains("--enable-expert-parallel")
        );
        // Data parallel 1: vLLM all-reduces the MoE output, as the model charges, and the note says so.
        assert!(!serve.command.contains("--data-parallel-size"), "{}", serve.command);
        assert!(ep2.notes.iter().any(|n| n.contains("all-reduces the MoE output") && n.contains("no all-to-all")));
    }

    /// DP+EP runs one data-parallel rank per machine with expert parallelism: the head serves the API, the
    /// other joins headless from rank 1; no Ray cluster, and the note names the all-to-all the model charges.
    #[test]
    fn dpep2_runs_one_data_parallel_rank_per_machine_with_expert_parallelism() {
        let dpep = serving_commands(Mode::Dpep2, "m", 4, &ServerSettings::default());
        let serves: Vec<&ServingStep> = dpep.steps.iter().filter(|s| s.command.contains("vllm serve")).collect();
        assert_eq!(serves.len(), 2);
        for s in &serves {
            for flag in ["--tensor-parallel-size 4", "--data-parallel-size 2", "--enable-expert-parallel"] {
                assert!(s.command.contains(flag), "{flag}: {}", s.command);
            }
        }
        assert!(!serves[0].command.contains("--headless") && serves[0].on == "machine 1");
        let second = &serves[1].command;
        assert!(second.contains("--data-parallel-start-rank 1") && second.contains("--headless"), "{second}");
        assert!(dpep.steps.iter().all(|s| !s.command.contains("ray start")));
        assert!(dpep.notes.iter().any(|n| n.contains("allgather_reducescatter")));
    }

    #[test]
    fn tp2_spans_both_machines_through_ray_and_pd_names_its_connector_roles() {
        let tp2 = serving_commands(Mode::Tp2, "m", 4, &ServerSettings::default());
        let all: Vec<&str> = tp2.steps.iter().map(|s| s.command.as_str()).collect();
        assert!(all
            .iter()
            .any(|c| c.contains("--tensor-parallel-size 8") && c.contains("--distributed-executor-backend ray")));
        assert!(all.iter().any(|c| c.starts_with("ray start --head")));
        assert!(all.iter().any(|c| c.contains("NCCL_SOCKET_IFNAME")));
        let pd = serving_commands(Mode::Pd, "m", 1, &ServerSettings::default());
        let text: String = pd.steps.iter().map(|s| s.command.clone()).collect();
        assert!(text.contains("\"kv_role\":\"kv_producer\"") && text.contains("\"kv_role\":\"kv_consumer\""));
        assert!(text.contains("NixlConnector"));
    }
}
