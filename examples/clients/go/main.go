// A Go client of protokube's (and any Kubernetes API server's) protobuf encoding, built on the
// stubs `make stubs LANG=go` writes. It reads a Pod, a PodList and three watch events, and creates a
// ConfigMap — every body as application/vnd.kubernetes.protobuf.
//
//	go run . http://127.0.0.1:8080 default
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"os"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const protobuf = "application/vnd.kubernetes.protobuf"

// magic starts every protobuf body: "k8s" and a zero byte.
var magic = []byte{0x6b, 0x38, 0x73, 0x00}

// unwrap opens an envelope: the magic, then a runtime.Unknown whose raw field holds the object.
func unwrap(body []byte) (*runtime.Unknown, error) {
	if !bytes.HasPrefix(body, magic) {
		return nil, fmt.Errorf("no k8s\\x00 envelope: %q", body)
	}
	unknown := &runtime.Unknown{}
	return unknown, proto.Unmarshal(body[len(magic):], unknown)
}

// wrap puts an object into an envelope, naming its apiVersion and kind.
func wrap(obj proto.Message, apiVersion, kind string) ([]byte, error) {
	raw, err := proto.Marshal(obj)
	if err != nil {
		return nil, err
	}
	unknown := &runtime.Unknown{
		TypeMeta: &runtime.TypeMeta{ApiVersion: proto.String(apiVersion), Kind: proto.String(kind)},
		Raw:      raw,
	}
	body, err := proto.Marshal(unknown)
	return append(append([]byte{}, magic...), body...), err
}

func get(url string) (*http.Response, error) {
	request, _ := http.NewRequest("GET", url, nil)
	request.Header.Set("Accept", protobuf)
	return http.DefaultClient.Do(request)
}

func read(url string, into proto.Message) error {
	response, err := get(url)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	unknown, err := unwrap(body)
	if err != nil {
		return err
	}
	return proto.Unmarshal(unknown.Raw, into)
}

func main() {
	server, namespace := os.Args[1], os.Args[2]
	base := server + "/api/v1/namespaces/" + namespace

	pod := &corev1.Pod{}
	if err := read(base+"/pods/web", pod); err != nil {
		panic(err)
	}
	fmt.Printf("pod %s image %s\n", pod.GetMetadata().GetName(), pod.GetSpec().GetContainers()[0].GetImage())

	pods := &corev1.PodList{}
	if err := read(base+"/pods", pods); err != nil {
		panic(err)
	}
	fmt.Printf("pods %d\n", len(pods.GetItems()))

	// A watch: each frame is a 4-byte big-endian length, then a WatchEvent whose object is an envelope.
	response, err := get(base + "/pods?watch=1")
	if err != nil {
		panic(err)
	}
	for i := 0; i < 3; i++ {
		var length uint32
		if err := binary.Read(response.Body, binary.BigEndian, &length); err != nil {
			panic(err)
		}
		frame := make([]byte, length)
		if _, err := io.ReadFull(response.Body, frame); err != nil {
			panic(err)
		}
		event := &metav1.WatchEvent{}
		if err := proto.Unmarshal(frame, event); err != nil {
			panic(err)
		}
		unknown, err := unwrap(event.GetObject().GetRaw())
		if err != nil {
			panic(err)
		}
		watched := &corev1.Pod{}
		if err := proto.Unmarshal(unknown.Raw, watched); err != nil {
			panic(err)
		}
		fmt.Printf("event %s %s %s\n", event.GetType(), unknown.GetTypeMeta().GetKind(), watched.GetMetadata().GetName())
	}
	response.Body.Close()

	configMap := &corev1.ConfigMap{
		Metadata: &metav1.ObjectMeta{Name: proto.String("from-go")},
		Data:     map[string]string{"language": "go"},
	}
	body, err := wrap(configMap, "v1", "ConfigMap")
	if err != nil {
		panic(err)
	}
	request, _ := http.NewRequest("POST", base+"/configmaps", bytes.NewReader(body))
	request.Header.Set("Content-Type", protobuf)
	request.Header.Set("Accept", protobuf)
	created, err := http.DefaultClient.Do(request)
	if err != nil {
		panic(err)
	}
	answer, _ := io.ReadAll(created.Body)
	stored := &corev1.ConfigMap{}
	unknown, err := unwrap(answer)
	if err != nil {
		panic(fmt.Sprintf("%d %s", created.StatusCode, answer))
	}
	if err := proto.Unmarshal(unknown.Raw, stored); err != nil {
		panic(err)
	}
	fmt.Printf("created %d %s uid %s\n", created.StatusCode, stored.GetMetadata().GetName(), stored.GetMetadata().GetUid())
}
