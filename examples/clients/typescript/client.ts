// A TypeScript client of protokube's (and any Kubernetes API server's) protobuf encoding, built on
// the stubs `make stubs LANG=typescript` writes (@bufbuild/protoc-gen-es). It reads a Pod, a PodList
// and three watch events, and creates a ConfigMap — every body as application/vnd.kubernetes.protobuf.
//
//   npx tsx client.ts http://127.0.0.1:8080 default      (stubs in ./gen)

import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { ConfigMapSchema, PodListSchema, PodSchema } from "./gen/k8s/io/api/core/v1/types_pb.js";
import { ObjectMetaSchema, WatchEventSchema } from "./gen/k8s/io/apimachinery/pkg/apis/meta/v1/types_pb.js";
import { TypeMetaSchema, UnknownSchema, type Unknown } from "./gen/k8s/io/apimachinery/pkg/runtime/types_pb.js";

const PROTOBUF = "application/vnd.kubernetes.protobuf";
// Every protobuf body starts with "k8s" and a zero byte.
const MAGIC = new Uint8Array([0x6b, 0x38, 0x73, 0x00]);

/** Open an envelope: the magic, then a runtime.Unknown whose raw field holds the object. */
function unwrap(body: Uint8Array): Unknown {
  if (!MAGIC.every((byte, i) => body[i] === byte)) {
    throw new Error("no k8s\\x00 envelope: " + new TextDecoder().decode(body));
  }
  return fromBinary(UnknownSchema, body.subarray(MAGIC.length));
}

/** Put an object into an envelope, naming its apiVersion and kind. */
function wrap<T extends DescMessage>(schema: T, object: MessageShape<T>, apiVersion: string, kind: string): Uint8Array {
  const unknown = create(UnknownSchema, {
    typeMeta: create(TypeMetaSchema, { apiVersion, kind }),
    raw: toBinary(schema, object),
  });
  const body = toBinary(UnknownSchema, unknown);
  const out = new Uint8Array(MAGIC.length + body.length);
  out.set(MAGIC);
  out.set(body, MAGIC.length);
  return out;
}

async function read<T extends DescMessage>(schema: T, url: string): Promise<MessageShape<T>> {
  const response = await fetch(url, { headers: { Accept: PROTOBUF } });
  return fromBinary(schema, unwrap(new Uint8Array(await response.arrayBuffer())).raw!);
}

const [server, namespace] = process.argv.slice(2);
const base = `${server}/api/v1/namespaces/${namespace}`;

const pod = await read(PodSchema, `${base}/pods/web`);
console.log(`pod ${pod.metadata?.name} image ${pod.spec?.containers[0].image}`);

const pods = await read(PodListSchema, `${base}/pods`);
console.log(`pods ${pods.items.length}`);

// A watch: each frame is a 4-byte big-endian length, then a WatchEvent whose object is an envelope.
const controller = new AbortController();
const watch = await fetch(`${base}/pods?watch=1`, { headers: { Accept: PROTOBUF }, signal: controller.signal });
const reader = watch.body!.getReader();
let buffer = new Uint8Array();
for (let seen = 0; seen < 3; ) {
  const length = buffer.length >= 4 ? new DataView(buffer.buffer, buffer.byteOffset).getUint32(0) : Infinity;
  if (buffer.length < 4 + length) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the watch ended early");
    const grown = new Uint8Array(buffer.length + value.length);
    grown.set(buffer);
    grown.set(value, buffer.length);
    buffer = grown;
    continue;
  }
  const event = fromBinary(WatchEventSchema, buffer.subarray(4, 4 + length));
  buffer = buffer.slice(4 + length);
  const unknown = unwrap(event.object!.raw!);
  console.log(`event ${event.type} ${unknown.typeMeta?.kind} ${fromBinary(PodSchema, unknown.raw!).metadata?.name}`);
  seen++;
}
controller.abort();

const configMap = create(ConfigMapSchema, {
  metadata: create(ObjectMetaSchema, { name: "from-typescript" }),
  data: { language: "typescript" },
});
const created = await fetch(`${base}/configmaps`, {
  method: "POST",
  headers: { "Content-Type": PROTOBUF, Accept: PROTOBUF },
  body: wrap(ConfigMapSchema, configMap, "v1", "ConfigMap"),
});
const stored = fromBinary(ConfigMapSchema, unwrap(new Uint8Array(await created.arrayBuffer())).raw!);
console.log(`created ${created.status} ${stored.metadata?.name} uid ${stored.metadata?.uid}`);
