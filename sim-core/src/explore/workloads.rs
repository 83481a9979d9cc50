//! Named workload presets: the prompt and answer lengths of a kind of traffic, each with the public source it is
//! modelled on. `plan --workload chat` and the page's planner read them; `--isl` and `--osl` override either.

use serde::Serialize;

/// One preset: tokens in and out per request, and where the pair comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WorkloadPreset {
    pub id: &'static str,
    pub isl: u32,
    pub osl: u32,
    /// What traffic it stands for.
    pub label: &'static str,
    /// The public source the pair is modelled on, and how.
    pub source: &'static str,
}

/// Every preset, in the order a person reads them.
pub const WORKLOAD_PRESETS: [WorkloadPreset; 4] = [
    WorkloadPreset {
        id: "chat",
        isl: 128,
        osl: 128,
        label: "chat: short questions, short answers",
        source: "NVIDIA Enterprise RAG Retrieval Scaling and Sizing Guide, RAG Benchmarking methodology \
                 (docs.nvidia.com/reference-architectures/enterprise-rag-retrieval-scaling-and-sizing-guide): \
                 'Chat 128/128'",
    },
    WorkloadPreset {
        id: "rag",
        isl: 4096,
        osl: 512,
        label: "retrieval-augmented answers: long retrieved context, short answer",
        source: "NVIDIA Enterprise RAG Retrieval Scaling and Sizing Guide, RAG Benchmarking methodology: \
                 'Summarization (4096/512)', the guide's long-input case for RAG",
    },
    WorkloadPreset {
        id: "long-generation",
        isl: 128,
        osl: 2048,
        label: "long generation: a short prompt, a long answer (reports, code)",
        source: "NVIDIA Enterprise RAG Retrieval Scaling and Sizing Guide, RAG Benchmarking methodology: \
                 'Analysis (128/2048)'",
    },
    WorkloadPreset {
        id: "agentic",
        isl: 20480,
        osl: 128,
        label: "agentic coding: a long growing context, short tool calls",
        source: "netpreme/coding_agent_traces on Hugging Face (SWE-bench Pro run by openai/gpt-oss-120b): turns \
                 of about 20,100 to 20,800 new input tokens with 41 to 200 output tokens; TraceLab \
                 (arXiv 2606.30560) finds coding-agent workloads 'long contexts with short outputs'. The model \
                 prefills every prompt in full: a prefix cache's hits are not modelled",
    },
];

/// The preset named `id`, or an error listing the known ones.
pub fn workload_preset(id: &str) -> Result<&'static WorkloadPreset, String> {
    WORKLOAD_PRESETS.iter().find(|w| w.id == id).ok_or_else(|| {
        let known: Vec<&str> = WORKLOAD_PRESETS.iter().map(|w| w.id).collect();
        format!("unknown workload preset `{id}`; known: {}", known.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_tokens_and_a_source_and_unknown_ones_list_the_known() {
        for w in WORKLOAD_PRESETS {
            assert!(w.isl > 0 && w.osl > 0 && !w.source.is_empty(), "{w:?}");
        }
        assert_eq!(workload_preset("rag").map(|w| (w.isl, w.osl)), Ok((4096, 512)));
        let e = workload_preset("batch").unwrap_err();
        assert!(e.contains("chat, rag, long-generation, agentic"), "{e}");
    }
}
