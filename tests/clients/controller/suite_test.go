package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

const (
	leaseName  = "widget-controller.example.protokube.dev"
	controller = "widget-controller"
	wait       = 30 * time.Second
)

// suite is what the steps share: the envtest environment, a direct client and the managers.
type suite struct {
	ctx     context.Context
	env     *envtest.Environment
	scheme  *runtime.Scheme
	k8s     client.Client // the API server's answers, not a cache's
	ns      string
	primary *manager // elected first; runs the controller
	standby *manager // serves the webhooks from its start; runs the controller once elected
	holder  string   // the primary's identity in the Lease
	child   types.UID
}

// manager is a started controller-runtime manager.
type manager struct {
	ctrl.Manager
	stop    context.CancelFunc
	stopped chan error
}

// startManager starts a manager with leader election (a Lease in the test's namespace) and a cache
// of that namespace, running the controller once elected and, with webhooks, serving the Widget
// webhooks where envtest registered them.
func (s *suite) startManager(t *testing.T, webhooks bool) *manager {
	t.Helper()
	options := ctrl.Options{
		Scheme:                        s.scheme,
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{s.ns: {}}},
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       s.ns,
		LeaderElectionReleaseOnCancel: true,
		// two managers in one process register the same controller name (its metrics' label)
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if webhooks {
		local := s.env.WebhookInstallOptions
		options.WebhookServer = webhook.NewServer(webhook.Options{
			Host: local.LocalServingHost, Port: local.LocalServingPort, CertDir: local.LocalServingCertDir,
		})
	}
	mgr, err := ctrl.NewManager(s.env.Config, options)
	must(t, err)
	reconciler := &WidgetReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(controller)}
	must(t, reconciler.SetupWithManager(s.ctx, mgr))
	if webhooks {
		must(t, WidgetWebhook{}.SetupWithManager(mgr))
	}
	ctx, stop := context.WithCancel(s.ctx)
	m := &manager{Manager: mgr, stop: stop, stopped: make(chan error, 1)}
	go func() { m.stopped <- mgr.Start(ctx) }()
	return m
}

// elected waits until m leads.
func (m *manager) elected(t *testing.T) {
	t.Helper()
	select {
	case <-m.Elected():
	case err := <-m.stopped:
		t.Fatalf("manager stopped before it was elected: %v", err)
	case <-time.After(wait):
		t.Fatalf("manager not elected within %s", wait)
	}
}

// shutdown stops m and waits until it has.
func (m *manager) shutdown(t *testing.T) {
	t.Helper()
	m.stop()
	select {
	case err := <-m.stopped:
		must(t, err)
	case <-time.After(wait):
		t.Fatalf("manager did not stop within %s", wait)
	}
}

// teardown stops what a failed step left running and deletes what envtest installed (envtest
// itself deletes the CRD, not the webhook configurations).
func (s *suite) teardown() {
	for _, m := range []*manager{s.primary, s.standby} {
		if m != nil {
			m.stop()
		}
	}
	if s.env == nil {
		return
	}
	if s.k8s != nil {
		for _, hook := range s.env.WebhookInstallOptions.MutatingWebhooks {
			_ = s.k8s.Delete(context.Background(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: hook.Name}})
		}
		for _, hook := range s.env.WebhookInstallOptions.ValidatingWebhooks {
			_ = s.k8s.Delete(context.Background(), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: hook.Name}})
		}
		if s.ns != "" {
			_ = s.k8s.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}})
		}
	}
	if err := s.env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "envtest stop:", err)
	}
	s.env = nil
}

// lease is the Lease's holder and duration.
func (s *suite) lease(t *testing.T) (string, int32) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	must(t, s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: leaseName}, lease))
	return ptr.Deref(lease.Spec.HolderIdentity, ""), ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)
}

// childOf waits until the ConfigMap name has data want, the Widget's label and its controller
// reference; it returns the ConfigMap.
func (s *suite) childOf(t *testing.T, widget string, name string, want map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	s.eventually(t, "child ConfigMap "+name, func() (bool, string) {
		owner := &Widget{}
		if err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: widget}, owner); err != nil {
			return false, err.Error()
		}
		if err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, cm); err != nil {
			return false, err.Error()
		}
		ref := metav1.GetControllerOf(cm)
		ok := ref != nil && ref.APIVersion == "example.protokube.dev/v1" && ref.Kind == "Widget" && ref.Name == owner.Name &&
			ref.UID == owner.UID && ptr.Deref(ref.BlockOwnerDeletion, false) && len(cm.OwnerReferences) == 1 &&
			cm.Labels[WidgetLabel] == owner.Name && fmt.Sprint(cm.Data) == fmt.Sprint(want)
		return ok, fmt.Sprintf("ownerReferences %+v labels %v data %v", cm.OwnerReferences, cm.Labels, cm.Data)
	})
	return cm
}

// waitStatus waits until the Widget carries the controller's finalizer and its status has observed
// generation (the finalizer, a metadata change, does not count as one) and names child, Ready.
func (s *suite) waitStatus(t *testing.T, name string, generation int64, child string) {
	t.Helper()
	s.eventually(t, name+"'s status", func() (bool, string) {
		w := &Widget{}
		if err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, w); err != nil {
			return false, err.Error()
		}
		ready := meta.FindStatusCondition(w.Status.Conditions, "Ready")
		ok := w.Generation == generation && w.Status.ObservedGeneration == generation && w.Status.ConfigMapName == child &&
			ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == generation &&
			controllerutil.ContainsFinalizer(w, Finalizer)
		return ok, fmt.Sprintf("generation %d finalizers %v status %+v", w.Generation, w.Finalizers, w.Status)
	})
}

// editWidget updates the Widget through the main resource, retried on conflicts, and checks that
// the update left the status as it was.
func (s *suite) editWidget(t *testing.T, name string, edit func(*Widget)) {
	t.Helper()
	must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &Widget{}
		if err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, w); err != nil {
			return err
		}
		status := w.Status
		edit(w)
		if err := s.k8s.Update(s.ctx, w); err != nil {
			return err
		}
		if w.Status.ConfigMapName != status.ConfigMapName {
			return errors.New("the main resource's update changed the status: " + w.Status.ConfigMapName)
		}
		return nil
	}))
}

// eventReasons are the reasons of the controller's events regarding the Widget name, found by
// field selectors; each event that tells of a ConfigMap names it as the related object.
func (s *suite) eventReasons(name string) (map[string]bool, error) {
	list := &eventsv1.EventList{}
	selector := client.MatchingFields{"regarding.name": name, "regarding.kind": "Widget", "reportingController": controller}
	if err := s.k8s.List(s.ctx, list, client.InNamespace(s.ns), selector); err != nil {
		return nil, err
	}
	reasons := map[string]bool{}
	for _, e := range list.Items {
		if e.Regarding.Name != name || e.ReportingController != controller {
			return nil, fmt.Errorf("event %s does not match the field selector: %+v", e.Name, e)
		}
		if e.Reason != "Finalized" && (e.Related == nil || e.Related.Kind != "ConfigMap") {
			return nil, fmt.Errorf("event %s names no related ConfigMap: %+v", e.Name, e)
		}
		reasons[e.Reason] = true
	}
	return reasons, nil
}

// gone waits until the object name of obj's kind is not found.
func (s *suite) gone(t *testing.T, obj client.Object, name string) {
	t.Helper()
	s.eventually(t, fmt.Sprintf("%T %s gone", obj, name), func() (bool, string) {
		err := s.k8s.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, obj)
		return apierrors.IsNotFound(err), fmt.Sprintf("err %v, finalizers %v", err, obj.GetFinalizers())
	})
}

// eventually polls cond every 100ms for 30s; it fails the test with cond's last word.
func (s *suite) eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s", what, wait, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
