//! A Rust client of protokube's (and any Kubernetes API server's) protobuf encoding, built on the
//! prost stubs `make stubs LANG=rust` writes. It reads a Pod, a PodList and three watch events, and
//! creates a ConfigMap — every body as application/vnd.kubernetes.protobuf. Each step prints its
//! result on stdout and PASS or FAIL on stderr; the exit status is 1 if any failed.
//!
//!     PROTOKUBE_RUST_STUBS=$PWD/stubs/rust cargo run -- http://127.0.0.1:8080 default

use std::collections::HashMap;
use std::io::Read;
use std::process::ExitCode;

use prost::Message;

#[allow(clippy::all, dead_code)]
mod stubs {
    include!(env!("PROTOKUBE_RUST_STUBS_MOD"));
}

use stubs::k8s::io::api::core::v1::{ConfigMap, Pod, PodList};
use stubs::k8s::io::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Status, WatchEvent};
use stubs::k8s::io::apimachinery::pkg::runtime::{TypeMeta, Unknown};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// Every protobuf body starts with "k8s" and a zero byte.
const MAGIC: &[u8] = b"k8s\x00";

/// What a step printed, or why it failed.
type Outcome = Result<String, String>;
/// A step's name and what it does, given the namespace's URL.
type Step = (&'static str, fn(&str) -> Outcome);

/// Opens an envelope: the magic, then a runtime.Unknown whose raw field holds the object.
fn unwrap(body: &[u8]) -> Result<Unknown, String> {
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| format!("no k8s\\x00 envelope: {:?}", String::from_utf8_lossy(body)))?;
    Unknown::decode(rest).map_err(|err| err.to_string())
}

/// Decodes the object inside an envelope.
fn unwrap_as<M: Message + Default>(body: &[u8]) -> Result<M, String> {
    M::decode(unwrap(body)?.raw()).map_err(|err| err.to_string())
}

/// Puts an object into an envelope, naming its apiVersion and kind.
fn wrap(object: &impl Message, api_version: &str, kind: &str) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(object.encode_to_vec()),
        ..Default::default()
    };
    [MAGIC, &unknown.encode_to_vec()].concat()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn read<M: Message + Default>(url: &str) -> Result<M, String> {
    let mut response = agent()
        .get(url)
        .header("Accept", PROTOBUF)
        .call()
        .map_err(|err| err.to_string())?;
    let body = response
        .body_mut()
        .read_to_vec()
        .map_err(|err| err.to_string())?;
    unwrap_as(&body)
}

fn get_pod(base: &str) -> Outcome {
    let pod: Pod = read(&format!("{base}/pods/web"))?;
    let image = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.containers.first())
        .map(|c| c.image())
        .unwrap_or_default();
    Ok(format!(
        "pod {} image {image}",
        pod.metadata.unwrap_or_default().name()
    ))
}

fn list_pods(base: &str) -> Outcome {
    let pods: PodList = read(&format!("{base}/pods"))?;
    Ok(format!("pods {}", pods.items.len()))
}

/// A watch: each frame is a 4-byte big-endian length, then a WatchEvent whose object is an envelope.
fn watch_pods(base: &str) -> Outcome {
    let response = agent()
        .get(&format!("{base}/pods?watch=1"))
        .header("Accept", PROTOBUF)
        .call();
    let mut stream = response
        .map_err(|err| err.to_string())?
        .into_body()
        .into_reader();
    let mut lines = Vec::new();
    for _ in 0..3 {
        let mut length = [0u8; 4];
        stream
            .read_exact(&mut length)
            .map_err(|err| err.to_string())?;
        let mut frame = vec![0u8; u32::from_be_bytes(length) as usize];
        stream
            .read_exact(&mut frame)
            .map_err(|err| err.to_string())?;
        let event = WatchEvent::decode(frame.as_slice()).map_err(|err| err.to_string())?;
        let unknown = unwrap(
            event
                .object
                .as_ref()
                .map(|raw| raw.raw())
                .unwrap_or_default(),
        )?;
        let pod = Pod::decode(unknown.raw()).map_err(|err| err.to_string())?;
        let kind = unknown.type_meta.unwrap_or_default().kind().to_owned();
        lines.push(format!(
            "event {} {kind} {}",
            event.r#type(),
            pod.metadata.unwrap_or_default().name()
        ));
    }
    Ok(lines.join("\n"))
}

fn create_config_map(base: &str) -> Outcome {
    let config_map = ConfigMap {
        metadata: Some(ObjectMeta {
            name: Some("from-rust".into()),
            ..Default::default()
        }),
        data: HashMap::from([("language".into(), "rust".into())]),
        ..Default::default()
    };
    let request = agent()
        .post(&format!("{base}/configmaps"))
        .header("Content-Type", PROTOBUF)
        .header("Accept", PROTOBUF);
    let mut response = request
        .send(&wrap(&config_map, "v1", "ConfigMap")[..])
        .map_err(|err| err.to_string())?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .read_to_vec()
        .map_err(|err| err.to_string())?;
    if status != 201 {
        // An error is a metav1.Status, enveloped too.
        let error: Status = unwrap_as(&body).map_err(|err| format!("{status}: {err}"))?;
        return Err(format!("{status} {}: {}", error.reason(), error.message()));
    }
    let stored: ConfigMap = unwrap_as(&body)?;
    let metadata = stored.metadata.unwrap_or_default();
    Ok(format!(
        "created {status} {} uid {}",
        metadata.name(),
        metadata.uid()
    ))
}

const STEPS: [Step; 4] = [
    ("get", get_pod),
    ("list", list_pods),
    ("watch", watch_pods),
    ("create", create_config_map),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, server, namespace] = args.as_slice() else {
        eprintln!("usage: protokube-client SERVER_URL NAMESPACE");
        return ExitCode::from(2);
    };
    let base = format!("{server}/api/v1/namespaces/{namespace}");
    let mut failed = false;
    for (step, run) in STEPS {
        match run(&base) {
            Ok(result) => {
                println!("{result}");
                eprintln!("PASS {step}");
            }
            Err(err) => {
                eprintln!("FAIL {step}: {err}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
