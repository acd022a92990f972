package main

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
)

const crdGroup = "clientgo.protokube.test"

// stepDynamic: a CRD made with the apiextensions clientset, its custom resources through the dynamic
// client (create, get, list, update, merge patch, status, a watch, delete), then the CRD deleted.
func stepDynamic(e *env, step string) {
	ext := apiextensions.NewForConfigOrDie(e.config)
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	name := "widgets." + crdGroup
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: crdGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList", ShortNames: []string{"wg"}},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size":  {Type: "integer", Minimum: ptr.To(1.0)},
							"color": {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"ready": {Type: "boolean"},
						}},
					},
				}},
			}},
		},
	}
	_, err := crds.Create(e.ctx, crd, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		check(err, "create the CRD")
	}
	defer func() {
		if err := crds.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			fmt.Printf("NOTE %s: deleting the CRD: %v\n", step, err)
		}
	}()
	eventually(e, "the CRD Established", func() bool {
		got, err := crds.Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	})

	// The dynamic client speaks JSON (unstructured), as upstream's does.
	dyn := dynamic.NewForConfigOrDie(e.base)
	gvr := schema.GroupVersionResource{Group: crdGroup, Version: "v1", Resource: "widgets"}
	r := dyn.Resource(gvr).Namespace(e.ns)
	eventually(e, "widgets served", func() bool {
		_, err := r.List(e.ctx, metav1.ListOptions{})
		return err == nil
	})
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	// A dynamic informer (WatchList of unstructured objects) and a RetryWatcher from a list's
	// resourceVersion, as controllers of custom resources use them.
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, e.ns, nil)
	informed := make(chan string, 100)
	_, err = factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { informed <- "add " + obj.(*unstructured.Unstructured).GetName() },
		UpdateFunc: func(_, obj any) { informed <- "update " + obj.(*unstructured.Unstructured).GetName() },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			informed <- "delete " + obj.(*unstructured.Unstructured).GetName()
		},
	})
	check(err, "dynamic informer handler")
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			fail("the dynamic informer for %v did not sync", typ)
		}
	}
	initial, err := r.List(e.ctx, metav1.ListOptions{})
	check(err, "list widgets")
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, initial.GetResourceVersion(), &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return r.Watch(ctx, options)
		},
	})
	check(err, "RetryWatcher")
	defer rw.Stop()
	w, err := r.Watch(ctx, metav1.ListOptions{})
	check(err, "watch widgets")
	defer w.Stop()
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": crdGroup + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	created, err := r.Create(e.ctx, widget, metav1.CreateOptions{})
	check(err, "create a widget")
	if color, _, _ := unstructured.NestedString(created.Object, "spec", "color"); color != "blue" {
		fail("the schema's default not applied: %v", created.Object["spec"])
	}
	invalid := widget.DeepCopy()
	invalid.SetName("w-invalid")
	check(unstructured.SetNestedField(invalid.Object, int64(0), "spec", "size"), "set size")
	if _, err = r.Create(e.ctx, invalid, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		fail("a widget below the schema's minimum: want Invalid, got %v", describe(err))
	}
	check(unstructured.SetNestedField(created.Object, int64(5), "spec", "size"), "set size")
	updated, err := r.Update(e.ctx, created, metav1.UpdateOptions{})
	check(err, "update the widget")
	patched, err := r.Patch(e.ctx, "w1", types.MergePatchType, []byte(`{"metadata":{"labels":{"p":"1"}},"spec":{"color":"red"}}`), metav1.PatchOptions{})
	check(err, "merge patch the widget")
	if size, _, _ := unstructured.NestedInt64(patched.Object, "spec", "size"); size != 5 || patched.GetLabels()["p"] != "1" {
		fail("the patched widget: %v", patched.Object)
	}
	check(unstructured.SetNestedField(patched.Object, true, "status", "ready"), "set status")
	status, err := r.UpdateStatus(e.ctx, patched, metav1.UpdateOptions{})
	check(err, "update the widget's status")
	if ready, _, _ := unstructured.NestedBool(status.Object, "status", "ready"); !ready || status.GetGeneration() != patched.GetGeneration() {
		fail("after the status update: %v", status.Object)
	}
	list, err := r.List(e.ctx, metav1.ListOptions{LabelSelector: "p=1"})
	check(err, "list widgets")
	if len(list.Items) != 1 || list.GetKind() != "WidgetList" {
		fail("the widget list: kind %q, %d items", list.GetKind(), len(list.Items))
	}
	applied, err := r.Apply(e.ctx, "w2", &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": crdGroup + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "w2"}, "spec": map[string]any{"size": int64(7)},
	}}, metav1.ApplyOptions{FieldManager: "clientgo"})
	check(err, "apply a widget")
	if applied.GetManagedFields()[0].Manager != "clientgo" {
		fail("the applied widget's managedFields: %+v", applied.GetManagedFields())
	}
	check(r.Delete(e.ctx, "w1", metav1.DeleteOptions{}), "delete w1")
	check(r.Delete(e.ctx, "w2", metav1.DeleteOptions{}), "delete w2")
	var seen []string
	for len(seen) < 6 {
		select {
		case event := <-w.ResultChan():
			if event.Type == watch.Error {
				fail("watch error: %v", apierrors.FromObject(event.Object))
			}
			seen = append(seen, fmt.Sprintf("%s %s", event.Type, event.Object.(*unstructured.Unstructured).GetName()))
		case <-ctx.Done():
			fail("the widget watch saw only %v", seen)
		}
	}
	want := []string{"ADDED w1", "MODIFIED w1", "MODIFIED w1", "MODIFIED w1", "ADDED w2", "DELETED w1"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		fail("the widget watch saw %v, want %v", seen, want)
	}
	_ = updated
	var retried []string
	for len(retried) < 6 {
		select {
		case event := <-rw.ResultChan():
			if event.Type == watch.Error {
				fail("RetryWatcher error: %v", apierrors.FromObject(event.Object))
			}
			retried = append(retried, fmt.Sprintf("%s %s", event.Type, event.Object.(*unstructured.Unstructured).GetName()))
		case <-ctx.Done():
			fail("the RetryWatcher saw only %v", retried)
		}
	}
	if fmt.Sprint(retried) != fmt.Sprint(want) {
		fail("the RetryWatcher saw %v, want %v", retried, want)
	}
	var handled []string
	for len(handled) < 6 {
		select {
		case got := <-informed:
			handled = append(handled, got)
		case <-ctx.Done():
			fail("the dynamic informer saw only %v", handled)
		}
	}
	if want := "[add w1 update w1 update w1 update w1 add w2 delete w1]"; fmt.Sprint(handled) != want {
		fail("the dynamic informer saw %v, want %s", handled, want)
	}
	e.out(step, "CRD established; widget create (defaulted), Invalid, update, merge patch, status, list, apply, watch, RetryWatcher, dynamic informer, delete")
}

// stepLeader: leader election on a Lease: a first candidate leads, a second takes over once the first
// releases.
func stepLeader(e *env, step string) {
	lock := func(id string) *resourcelock.LeaseLock {
		return &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: "cg-leader", Namespace: e.ns},
			Client:     e.cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
	}
	lead := func(id string) {
		ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
		defer cancel()
		led := false
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock: lock(id), LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) { led = true; time.Sleep(1200 * time.Millisecond); cancel() },
				OnStoppedLeading: func() {},
			},
		})
		if !led {
			fail("%s did not lead", id)
		}
	}
	lead("first")
	lease, err := e.cs.CoordinationV1().Leases(e.ns).Get(e.ctx, "cg-leader", metav1.GetOptions{})
	check(err, "get the lease")
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "" {
		fail("the released lease is held by %v", lease.Spec.HolderIdentity)
	}
	start := time.Now()
	lead("second")
	lease, err = e.cs.CoordinationV1().Leases(e.ns).Get(e.ctx, "cg-leader", metav1.GetOptions{})
	check(err, "get the lease")
	if *lease.Spec.LeaseTransitions < 1 {
		fail("the lease's transitions: %d", *lease.Spec.LeaseTransitions)
	}
	e.out(step, "first led and released; second led after %.1fs; %d transitions", time.Since(start).Seconds(), *lease.Spec.LeaseTransitions)
}
