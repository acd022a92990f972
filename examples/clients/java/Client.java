// A Java client of protokube's (and any Kubernetes API server's) protobuf encoding, built on the
// stubs `make stubs LANG=java` writes (protoc 3.21 with Debian's protobuf-java 3.21 runtime). It
// reads a Pod, a PodList and three watch events, and creates a ConfigMap — every body as
// application/vnd.kubernetes.protobuf.
//
//   java -cp classes:/usr/share/java/protobuf.jar Client http://127.0.0.1:8080 default

import java.io.DataInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;

import com.google.protobuf.ByteString;
import k8s.io.api.core.v1.Types.ConfigMap;
import k8s.io.api.core.v1.Types.Pod;
import k8s.io.api.core.v1.Types.PodList;
import k8s.io.apimachinery.pkg.apis.meta.v1.Types.ObjectMeta;
import k8s.io.apimachinery.pkg.apis.meta.v1.Types.WatchEvent;
import k8s.io.apimachinery.pkg.runtime.Types.TypeMeta;
import k8s.io.apimachinery.pkg.runtime.Types.Unknown;

public class Client {
    static final String PROTOBUF = "application/vnd.kubernetes.protobuf";
    // Every protobuf body starts with "k8s" and a zero byte.
    static final byte[] MAGIC = {0x6b, 0x38, 0x73, 0x00};
    static final HttpClient HTTP = HttpClient.newHttpClient();

    /** Open an envelope: the magic, then a runtime.Unknown whose raw field holds the object. */
    static Unknown unwrap(byte[] body) throws Exception {
        if (body.length < 4 || !Arrays.equals(Arrays.copyOf(body, 4), MAGIC)) {
            throw new IllegalStateException("no k8s\\x00 envelope: " + new String(body));
        }
        return Unknown.parseFrom(Arrays.copyOfRange(body, 4, body.length));
    }

    /** Put an object into an envelope, naming its apiVersion and kind. */
    static byte[] wrap(com.google.protobuf.Message object, String apiVersion, String kind) {
        Unknown unknown = Unknown.newBuilder()
            .setTypeMeta(TypeMeta.newBuilder().setApiVersion(apiVersion).setKind(kind))
            .setRaw(object.toByteString())
            .build();
        return ByteString.copyFrom(MAGIC).concat(unknown.toByteString()).toByteArray();
    }

    static HttpRequest.Builder request(String url) {
        return HttpRequest.newBuilder(URI.create(url)).header("Accept", PROTOBUF);
    }

    static byte[] get(String url) throws Exception {
        return HTTP.send(request(url).build(), HttpResponse.BodyHandlers.ofByteArray()).body();
    }

    public static void main(String[] args) throws Exception {
        String base = args[0] + "/api/v1/namespaces/" + args[1];

        Pod pod = Pod.parseFrom(unwrap(get(base + "/pods/web")).getRaw());
        System.out.println("pod " + pod.getMetadata().getName() + " image " + pod.getSpec().getContainers(0).getImage());

        PodList pods = PodList.parseFrom(unwrap(get(base + "/pods")).getRaw());
        System.out.println("pods " + pods.getItemsCount());

        // A watch: each frame is a 4-byte big-endian length, then a WatchEvent whose object is an envelope.
        HttpResponse<InputStream> watch = HTTP.send(request(base + "/pods?watch=1").build(), HttpResponse.BodyHandlers.ofInputStream());
        try (DataInputStream frames = new DataInputStream(watch.body())) {
            for (int i = 0; i < 3; i++) {
                byte[] frame = new byte[frames.readInt()];
                frames.readFully(frame);
                WatchEvent event = WatchEvent.parseFrom(frame);
                Unknown unknown = unwrap(event.getObject().getRaw().toByteArray());
                Pod watched = Pod.parseFrom(unknown.getRaw());
                System.out.println("event " + event.getType() + " " + unknown.getTypeMeta().getKind() + " " + watched.getMetadata().getName());
            }
        }

        ConfigMap configMap = ConfigMap.newBuilder()
            .setMetadata(ObjectMeta.newBuilder().setName("from-java"))
            .putData("language", "java")
            .build();
        HttpRequest post = request(base + "/configmaps")
            .header("Content-Type", PROTOBUF)
            .POST(HttpRequest.BodyPublishers.ofByteArray(wrap(configMap, "v1", "ConfigMap")))
            .build();
        HttpResponse<byte[]> created = HTTP.send(post, HttpResponse.BodyHandlers.ofByteArray());
        ConfigMap stored = ConfigMap.parseFrom(unwrap(created.body()).getRaw());
        System.out.println("created " + created.statusCode() + " " + stored.getMetadata().getName() + " uid " + stored.getMetadata().getUid());
    }
}
