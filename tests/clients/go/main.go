// Command clientgo drives a protokube server with k8s.io/client-go the way controllers do: typed
// clients over protobuf, shared informers (WatchList), server-side apply with applyconfigurations,
// discovery with a RESTMapper, the dynamic client on a CRD, leader election on a Lease, the binding,
// eviction and token subresources, the metadata client, event recorders and garbage collection.
//
//	clientgo -kubeconfig FILE -namespace NS [-content-type protobuf|json] [-steps typed,informer,...]
//
// Each step prints "PASS <step>: ..." or "FAIL <step>: ..." (then the requests it made last, and the
// program exits 1). tests/gateway/test_client_go.py builds and runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	protobuf = "application/vnd.kubernetes.protobuf"
	jsonType = "application/json"
	cborType = "application/cbor"
)

// failure ends a step: its message is printed as FAIL.
type failure struct{ msg string }

func fail(format string, args ...any) {
	panic(failure{fmt.Sprintf(format, args...)})
}

// check fails the step when err is not nil.
func check(err error, format string, args ...any) {
	if err != nil {
		fail("%s: %s", fmt.Sprintf(format, args...), describe(err))
	}
}

// describe an error with its API status when it has one.
func describe(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return fmt.Sprintf("%v (status %d, reason %q, details %+v)", err, s.Code, s.Reason, s.Details)
	}
	return err.Error()
}

// exchange is one request the program made and its response.
type exchange struct {
	method, url, accept, contentType, status, responseType string
}

// recorder keeps the last requests of the program (printed when a step fails).
type recorder struct {
	mu   sync.Mutex
	last []exchange
	all  []exchange
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	e := exchange{
		method: req.Method, url: req.URL.RequestURI(), accept: req.Header.Get("Accept"),
		contentType: req.Header.Get("Content-Type"),
	}
	if err != nil {
		e.status = "error: " + err.Error()
	} else {
		e.status = resp.Status
		e.responseType = resp.Header.Get("Content-Type")
	}
	r.mu.Lock()
	r.last = append(r.last, e)
	if len(r.last) > 12 {
		r.last = r.last[1:]
	}
	r.all = append(r.all, e)
	r.mu.Unlock()
	return resp, err
}

// since returns the requests made since the mark (a length of all).
func (r *recorder) since(mark int) []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.all[mark:]...)
}

func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.all)
}

// env is what every step gets.
type env struct {
	ctx         context.Context
	ns          string
	contentType string // the typed clients' content type
	base        *rest.Config
	config      *rest.Config // base with contentType
	cs          *kubernetes.Clientset
	rec         *recorder
}

func (e *env) out(step, format string, args ...any) {
	fmt.Printf("PASS %s: %s\n", step, fmt.Sprintf(format, args...))
}

type step struct {
	name string
	run  func(*env, string)
}

var steps = []step{
	{"typed", stepTyped},
	{"paging", stepPaging},
	{"informer", stepInformer},
	{"watchlist", stepWatchList},
	{"relist", stepRelist},
	{"apply", stepApply},
	{"discovery", stepDiscovery},
	{"dynamic", stepDynamic},
	{"leader", stepLeader},
	{"subresources", stepSubresources},
	{"metadata", stepMetadata},
	{"events", stepEvents},
	{"gc", stepGC},
	{"reads", stepReads},
	{"scale", stepScale},
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig file")
	namespace := flag.String("namespace", "", "the namespace the steps work in (created when missing)")
	content := flag.String("content-type", "protobuf", "protobuf, json or cbor: what the typed clients send and ask for")
	only := flag.String("steps", "", "comma-separated steps to run (all by default)")
	timeout := flag.Duration("timeout", 3*time.Minute, "the whole run's deadline")
	flag.Parse()
	if *kubeconfig == "" || *namespace == "" {
		fmt.Fprintln(os.Stderr, "usage: clientgo -kubeconfig FILE -namespace NS [-content-type protobuf|json] [-steps a,b]")
		os.Exit(2)
	}
	base, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Printf("FAIL setup: kubeconfig %s: %v\n", *kubeconfig, err)
		os.Exit(1)
	}
	rec := &recorder{}
	base.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec }
	base.QPS, base.Burst = 200, 400
	config := rest.CopyConfig(base)
	switch *content {
	case "protobuf":
		config.ContentType = protobuf
		config.AcceptContentTypes = protobuf + "," + jsonType
	case "json":
		config.ContentType = jsonType
		config.AcceptContentTypes = jsonType
	case "cbor": // client-go sends CBOR only with KUBE_FEATURE_ClientsAllowCBOR=true in its environment
		config.ContentType = cborType
		config.AcceptContentTypes = cborType + "," + jsonType
	default:
		fmt.Printf("FAIL setup: -content-type must be protobuf, json or cbor, not %q\n", *content)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	e := &env{ctx: ctx, ns: *namespace, contentType: config.ContentType, base: base, config: config, rec: rec}
	e.cs = kubernetes.NewForConfigOrDie(config)

	selected := map[string]bool{}
	for _, name := range strings.Split(*only, ",") {
		if name != "" {
			selected[name] = true
		}
	}
	for name := range selected {
		known := false
		for _, s := range steps {
			known = known || s.name == name
		}
		if !known {
			fmt.Printf("FAIL setup: no step %q\n", name)
			os.Exit(2)
		}
	}
	if !run(e, "setup", setup) {
		os.Exit(1)
	}
	for _, s := range steps {
		if len(selected) > 0 && !selected[s.name] {
			continue
		}
		if !run(e, s.name, s.run) {
			os.Exit(1)
		}
	}
	fmt.Println("DONE")
}

// run one step, reporting a failure (a panic with a failure, or any other panic) as FAIL.
func run(e *env, name string, f func(*env, string)) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			if f, isFailure := r.(failure); isFailure {
				msg = f.msg
			}
			fmt.Printf("FAIL %s: %s\n", name, msg)
			e.rec.mu.Lock()
			fmt.Println("  last requests:")
			for _, x := range e.rec.last {
				fmt.Printf("    %s %s [accept %q, body %q] -> %s [%s]\n", x.method, x.url, x.accept, x.contentType, x.status, x.responseType)
			}
			e.rec.mu.Unlock()
			ok = false
		}
	}()
	f(e, name)
	return true
}

// setup makes the namespace (when missing) and waits for its default ServiceAccount (pods are
// admitted once it exists).
func setup(e *env, name string) {
	_, err := e.cs.CoreV1().Namespaces().Get(e.ctx, e.ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = e.cs.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		check(err, "create namespace %s", e.ns)
	}
	eventually(e, "the default ServiceAccount", func() bool {
		_, err := e.cs.CoreV1().ServiceAccounts(e.ns).Get(e.ctx, "default", metav1.GetOptions{})
		return err == nil
	})
}

// eventually polls until done or fails after 20s.
func eventually(e *env, what string, done func() bool) {
	deadline := time.Now().Add(20 * time.Second)
	for !done() {
		if time.Now().After(deadline) || e.ctx.Err() != nil {
			fail("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
