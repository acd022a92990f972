package controller

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

var contentType = flag.String("content-type", "", `"json" for JSON throughout; by default controller-runtime's: protobuf for built-in kinds, JSON for Widgets`)

// TestWidgetController runs the controller against the cluster of $KUBECONFIG through envtest
// (UseExistingCluster), each step a subtest that needs the ones before it.
func TestWidgetController(t *testing.T) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := &suite{ctx: ctx, scheme: runtime.NewScheme()}
	must(t, clientgoscheme.AddToScheme(s.scheme))
	must(t, AddToScheme(s.scheme))
	must(t, apiextensionsv1.AddToScheme(s.scheme))
	t.Cleanup(s.teardown)
	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"envtest", s.start},
		{"manager", s.manager},
		{"standby", s.startStandby},
		{"create", s.create},
		{"status", s.status},
		{"webhooks", s.webhooks},
		{"cache", s.cache},
		{"update", s.update},
		{"rename", s.rename},
		{"drift", s.drift},
		{"events", s.events},
		{"delete", s.delete},
		{"orphan", s.orphan},
		{"failover", s.failover},
		{"release", s.release},
		{"uninstall", s.uninstall},
	}
	for _, step := range steps {
		if !t.Run(step.name, step.run) {
			t.FailNow() // later steps build on this one
		}
	}
}

// start: envtest against the existing cluster installs crd/ and webhook/ (its services replaced by
// a local URL and envtest's CA) and waits until both are served.
func (s *suite) start(t *testing.T) {
	s.env = &envtest.Environment{
		UseExistingCluster:    ptr.To(true),
		Scheme:                s.scheme,
		CRDInstallOptions:     envtest.CRDInstallOptions{Paths: []string{"crd"}, CleanUpAfterUse: true},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{"webhook"}},
	}
	began := time.Now()
	cfg, err := s.env.Start()
	must(t, err)
	t.Logf("envtest setup took %.3fs", time.Since(began).Seconds())
	if *contentType == "json" {
		cfg.ContentType = runtime.ContentTypeJSON
	}
	s.k8s, err = client.New(cfg, client.Options{Scheme: s.scheme})
	must(t, err)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctrl-"}}
	must(t, s.k8s.Create(s.ctx, ns))
	s.ns = ns.Name
	if len(s.env.CRDs) != 1 || s.env.CRDs[0].Name != "widgets.example.protokube.dev" {
		t.Fatalf("envtest installed %d CRDs, want widgets.example.protokube.dev", len(s.env.CRDs))
	}
	hooks := s.env.WebhookInstallOptions
	if len(hooks.MutatingWebhooks) != 1 || len(hooks.ValidatingWebhooks) != 1 {
		t.Fatalf("envtest installed %d mutating and %d validating webhook configurations, want 1 and 1",
			len(hooks.MutatingWebhooks), len(hooks.ValidatingWebhooks))
	}
}

// manager: the primary manager is elected: the Lease names it for 15 s.
func (s *suite) manager(t *testing.T) {
	s.primary = s.startManager(t, false)
	s.primary.elected(t)
	holder, duration := s.lease(t)
	if holder == "" || duration != 15 {
		t.Fatalf("lease after election: holder %q, duration %d", holder, duration)
	}
	s.holder = holder
}

// standby: a second manager serves the webhooks but is not elected while the primary renews.
func (s *suite) startStandby(t *testing.T) {
	s.standby = s.startManager(t, true)
	s.eventually(t, "the standby's webhook server", func() (bool, string) {
		err := s.standby.GetWebhookServer().StartedChecker()(nil)
		return err == nil, fmt.Sprint(err)
	})
	select {
	case <-s.standby.Elected():
		t.Fatal("the standby was elected while the primary held the lease")
	case <-time.After(3 * time.Second): // past the standby's first tries (every 2 s)
	}
	if holder, _ := s.lease(t); holder != s.holder {
		t.Fatalf("lease holder %q, want the primary %q", holder, s.holder)
	}
}

// create: a Widget gets a child ConfigMap with its data, its label and a controller reference.
func (s *suite) create(t *testing.T) {
	widget := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: s.ns}, Spec: WidgetSpec{Data: map[string]string{"color": "blue"}}}
	must(t, s.k8s.Create(s.ctx, widget))
	s.child = s.childOf(t, "w1", "w1", map[string]string{"color": "blue"}).UID
}

// status: the controller added its finalizer and wrote the status subresource: generation
// observed, child named, Ready.
func (s *suite) status(t *testing.T) {
	s.waitStatus(t, "w1", 1, "w1")
}

// webhooks: a dry-run create shows the defaulting webhook's color and stores nothing; the
// validating webhook's Invalid status reaches the client whole, on create and on update.
func (s *suite) webhooks(t *testing.T) {
	dry := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "dry", Namespace: s.ns}, Spec: WidgetSpec{Data: map[string]string{"k": "v"}}}
	must(t, s.k8s.Create(s.ctx, dry, client.DryRunAll))
	if dry.Spec.Data["color"] != DefaultColor || dry.Spec.Data["k"] != "v" {
		t.Fatalf("dry-run create's answer: data %v, want the defaulted color", dry.Spec.Data)
	}
	if err := s.k8s.Get(s.ctx, client.ObjectKeyFromObject(dry), &Widget{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dry-run Widget: %v, want NotFound", err)
	}
	bad := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: s.ns}, Spec: WidgetSpec{ConfigMapName: "kube-bad"}}
	denied(t, s.k8s.Create(s.ctx, bad), "bad", "kube-bad")
	w := &Widget{}
	must(t, s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: "w1"}, w))
	w.Spec.ConfigMapName = "kube-w1"
	denied(t, s.k8s.Update(s.ctx, w), "w1", "kube-w1")
}

// denied checks that err is the validating webhook's 422 for the Widget name with child.
func denied(t *testing.T, err error, name, child string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("want the webhook's Invalid status, got %v", err)
	}
	got := status.Status()
	want := `admission webhook "vwidget.example.protokube.dev" denied the request: Widget.example.protokube.dev "` + name +
		`" is invalid: spec.configMapName: Invalid value: "` + child + `": must not start with kube-`
	details := got.Details
	if got.Code != 422 || got.Reason != metav1.StatusReasonInvalid || got.Message != want || details == nil ||
		details.Name != name || details.Group != "example.protokube.dev" || details.Kind != "Widget" ||
		len(details.Causes) != 1 || details.Causes[0].Field != "spec.configMapName" {
		t.Fatalf("webhook denial: %+v (details %+v), want 422 Invalid %q", got, details, want)
	}
}

// cache: the manager's cached client finds the child through the field index and a label
// selector; the API server answers the same label selector.
func (s *suite) cache(t *testing.T) {
	for name, opts := range map[string][]client.ListOption{
		"cache by index": {client.MatchingFields{OwnerIndex: "w1"}},
		"cache by label": {client.MatchingLabels{WidgetLabel: "w1"}},
	} {
		list := &corev1.ConfigMapList{}
		must(t, s.primary.GetClient().List(s.ctx, list, append(opts, client.InNamespace(s.ns))...))
		if len(list.Items) != 1 || list.Items[0].Name != "w1" {
			t.Fatalf("%s: %d ConfigMaps, want w1", name, len(list.Items))
		}
	}
	list := &corev1.ConfigMapList{}
	must(t, s.k8s.List(s.ctx, list, client.InNamespace(s.ns), client.MatchingLabels{WidgetLabel: "w1"}))
	if len(list.Items) != 1 || list.Items[0].Name != "w1" {
		t.Fatalf("server by label: %d ConfigMaps, want w1", len(list.Items))
	}
}

// update: a spec change reaches the same child; a status sent on the main resource is ignored.
func (s *suite) update(t *testing.T) {
	want := map[string]string{"color": "red", "size": "L"}
	s.editWidget(t, "w1", func(w *Widget) {
		w.Spec.Data = want
		w.Status.ConfigMapName = "not-through-the-main-resource"
	})
	child := s.childOf(t, "w1", "w1", want)
	if child.UID != s.child {
		t.Fatalf("child was replaced (uid %s, was %s), not updated", child.UID, s.child)
	}
	s.waitStatus(t, "w1", 2, "w1")
}

// rename: a new child name makes a new child; the old one, found through the index, is deleted.
func (s *suite) rename(t *testing.T) {
	s.editWidget(t, "w1", func(w *Widget) { w.Spec.ConfigMapName = "w1-renamed" })
	s.childOf(t, "w1", "w1-renamed", map[string]string{"color": "red", "size": "L"})
	s.gone(t, &corev1.ConfigMap{}, "w1")
	s.waitStatus(t, "w1", 3, "w1-renamed")
}

// drift: the controller undoes another client's edit and deletion of its child (it watches what it owns).
func (s *suite) drift(t *testing.T) {
	want := map[string]string{"color": "red", "size": "L"}
	must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: "w1-renamed"}, cm); err != nil {
			return err
		}
		cm.Data = map[string]string{"color": "green"}
		return s.k8s.Update(s.ctx, cm)
	}))
	old := s.childOf(t, "w1", "w1-renamed", want)
	must(t, s.k8s.Delete(s.ctx, old))
	s.eventually(t, "the deleted child made again", func() (bool, string) {
		cm := &corev1.ConfigMap{}
		err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: "w1-renamed"}, cm)
		return err == nil && cm.UID != old.UID, fmt.Sprint(err)
	})
	s.childOf(t, "w1", "w1-renamed", want)
}

// events: the controller's events.k8s.io/v1 Events regarding the Widget, found by field selectors.
func (s *suite) events(t *testing.T) {
	s.eventually(t, "events regarding w1", func() (bool, string) {
		reasons, err := s.eventReasons("w1")
		return err == nil && reasons["ConfigMapCreated"] && reasons["ConfigMapUpdated"] && reasons["ConfigMapDeleted"],
			fmt.Sprintf("reasons %v, err %v", reasons, err)
	})
}

// delete: the deleted Widget (background propagation) stays until the controller removed its
// finalizer; then the garbage collector deletes its child.
func (s *suite) delete(t *testing.T) {
	must(t, s.k8s.Delete(s.ctx, &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: s.ns}}))
	s.gone(t, &Widget{}, "w1")
	s.gone(t, &corev1.ConfigMap{}, "w1-renamed")
	reasons, err := s.eventReasons("w1")
	if err != nil || !reasons["Finalized"] {
		t.Fatal(fmt.Sprintf("reasons %v, err %v", reasons, err))
	}
}

// orphan: a Widget given its color by the defaulting webhook, deleted with propagationPolicy
// Orphan, leaves its child without the owner reference.
func (s *suite) orphan(t *testing.T) {
	widget := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w2", Namespace: s.ns}, Spec: WidgetSpec{Data: map[string]string{"k": "v"}}}
	must(t, s.k8s.Create(s.ctx, widget))
	s.childOf(t, "w2", "w2", map[string]string{"k": "v", "color": DefaultColor})
	s.waitStatus(t, "w2", 1, "w2")
	must(t, s.k8s.Delete(s.ctx, widget, client.PropagationPolicy(metav1.DeletePropagationOrphan)))
	s.gone(t, &Widget{}, "w2")
	s.eventually(t, "w2's child orphaned", func() (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: "w2"}, cm); err != nil {
			return false, err.Error()
		}
		return len(cm.OwnerReferences) == 0, fmt.Sprint("ownerReferences ", cm.OwnerReferences)
	})
}

// failover: the stopped primary releases the Lease, the standby is elected and reconciles.
func (s *suite) failover(t *testing.T) {
	s.primary.shutdown(t)
	s.standby.elected(t)
	holder, _ := s.lease(t)
	if holder == "" || holder == s.holder {
		t.Fatalf("lease holder after failover %q, want the standby (the primary was %q)", holder, s.holder)
	}
	widget := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w3", Namespace: s.ns}}
	must(t, s.k8s.Create(s.ctx, widget))
	s.childOf(t, "w3", "w3", map[string]string{"color": DefaultColor})
	s.waitStatus(t, "w3", 1, "w3")
	must(t, s.k8s.Delete(s.ctx, widget))
	s.gone(t, &Widget{}, "w3")
	s.gone(t, &corev1.ConfigMap{}, "w3")
}

// release: the stopped standby gives up the Lease (LeaderElectionReleaseOnCancel).
func (s *suite) release(t *testing.T) {
	s.standby.shutdown(t)
	if holder, _ := s.lease(t); holder != "" {
		t.Fatalf("lease still held by %q", holder)
	}
}

// uninstall: envtest deletes the CRD it installed (the test, the webhook configurations and the
// namespace); the CRD is gone once its Widgets' cleanup is done.
func (s *suite) uninstall(t *testing.T) {
	began := time.Now()
	s.teardown()
	t.Logf("envtest teardown took %.3fs", time.Since(began).Seconds())
	s.eventually(t, "the CRD deleted", func() (bool, string) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := s.k8s.Get(s.ctx, client.ObjectKey{Name: "widgets.example.protokube.dev"}, crd)
		return apierrors.IsNotFound(err), fmt.Sprintf("err %v, finalizers %v", err, crd.Finalizers)
	})
	t.Logf("CRD gone %.3fs after envtest's Stop began", time.Since(began).Seconds())
}
