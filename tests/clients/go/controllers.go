package main

import (
	"context"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	k8sevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"sub": "yes"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			TerminationGracePeriodSeconds: ptr.To(int64(0))},
	}
}

// stepSubresources: what controllers and the scheduler do through subresources, in the configured
// content type: pods/binding, pods/status by apply, a field-selected watch, pods/eviction (a
// DeleteOptions inside), serviceaccounts/token and the token used.
func stepSubresources(e *env, step string) {
	pods := e.cs.CoreV1().Pods(e.ns)
	_, err := pods.Create(e.ctx, testPod("cg-bind"), metav1.CreateOptions{})
	check(err, "create pod")
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "node-1").String()})
	check(err, "watch pods on node-1")
	defer w.Stop()
	check(pods.Bind(e.ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "cg-bind"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{}), "bind")
	select {
	case event := <-w.ResultChan():
		if pod, ok := event.Object.(*corev1.Pod); !ok || pod.Name != "cg-bind" || pod.Spec.NodeName != "node-1" {
			fail("the field-selected watch saw %s %v", event.Type, key(event.Object))
		}
	case <-ctx.Done():
		fail("the bound pod not seen by a watch on spec.nodeName=node-1")
	}
	err = pods.Bind(e.ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "cg-bind"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-2"}}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) {
		fail("binding a bound pod: want Conflict, got %v", describe(err))
	}
	applied, err := pods.ApplyStatus(e.ctx, corev1ac.Pod("cg-bind", e.ns).WithStatus(corev1ac.PodStatus().
		WithConditions(corev1ac.PodCondition().WithType("example.com/Applied").WithStatus(corev1.ConditionTrue))),
		metav1.ApplyOptions{FieldManager: "clientgo-status", Force: true})
	check(err, "apply pod status")
	found := false
	for _, c := range applied.Status.Conditions {
		found = found || c.Type == "example.com/Applied"
	}
	if !found || applied.Spec.NodeName != "node-1" {
		fail("after the status apply: conditions %+v, nodeName %q", applied.Status.Conditions, applied.Spec.NodeName)
	}

	_, err = pods.Create(e.ctx, testPod("cg-evict"), metav1.CreateOptions{})
	check(err, "create pod")
	check(pods.EvictV1(e.ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: "cg-evict", Namespace: e.ns},
		DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))},
	}), "evict")
	eventually(e, "the evicted pod gone", func() bool {
		_, err := pods.Get(e.ctx, "cg-evict", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	err = pods.EvictV1(e.ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "cg-evict", Namespace: e.ns}})
	if !apierrors.IsNotFound(err) {
		fail("evicting a missing pod: want NotFound, got %v", describe(err))
	}

	token, err := e.cs.CoreV1().ServiceAccounts(e.ns).CreateToken(e.ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600)), Audiences: []string{"https://kubernetes.default.svc.cluster.local"}},
	}, metav1.CreateOptions{})
	check(err, "serviceaccounts/token")
	if token.Status.Token == "" || token.Status.ExpirationTimestamp.IsZero() {
		fail("the TokenRequest's status: %+v", token.Status)
	}
	asSA := rest.AnonymousClientConfig(e.config)
	asSA.BearerToken = token.Status.Token
	saClient := kubernetes.NewForConfigOrDie(asSA)
	review, err := saClient.AuthenticationV1().SelfSubjectReviews().Create(e.ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	check(err, "SelfSubjectReview with the token")
	if want := "system:serviceaccount:" + e.ns + ":default"; review.Status.UserInfo.Username != want {
		fail("the token authenticates as %q, want %q", review.Status.UserInfo.Username, want)
	}
	_, err = saClient.CoreV1().Secrets(e.ns).List(e.ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		fail("the default ServiceAccount listing secrets: want Forbidden, got %v", describe(err))
	}
	access, err := e.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(e.ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: e.ns, Verb: "delete", Resource: "pods"}},
	}, metav1.CreateOptions{})
	check(err, "SelfSubjectAccessReview")
	if !access.Status.Allowed {
		fail("the admin may not delete pods: %+v", access.Status)
	}
	check(pods.Delete(e.ctx, "cg-bind", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}), "delete the bound pod")
	e.out(step, "pods/binding (Conflict again), watch by spec.nodeName, status apply, eviction (DeleteOptions inside), TokenRequest used (SelfSubjectReview %s, Forbidden), SelfSubjectAccessReview", review.Status.UserInfo.Username)
}

// stepMetadata: the metadata client (PartialObjectMetadata, asked as protobuf) and a metadata informer,
// as the garbage collector and namespace controller use them.
func stepMetadata(e *env, step string) {
	mc := metadata.NewForConfigOrDie(e.base)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	_, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-meta-a", Labels: map[string]string{"m": "1"}}, Data: map[string]string{"big": strings.Repeat("x", 1000)}}, metav1.CreateOptions{})
	check(err, "create")
	mark := e.rec.mark()
	one, err := mc.Resource(gvr).Namespace(e.ns).Get(e.ctx, "cg-meta-a", metav1.GetOptions{})
	check(err, "metadata get")
	if one.Labels["m"] != "1" || one.UID == "" || one.Name != "cg-meta-a" {
		fail("metadata get answered %+v", one.ObjectMeta)
	}
	list, err := mc.Resource(gvr).Namespace(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "m=1"})
	check(err, "metadata list")
	if len(list.Items) != 1 || list.Items[0].Name != "cg-meta-a" || list.ResourceVersion == "" {
		fail("metadata list: %d items at %q", len(list.Items), list.ResourceVersion)
	}
	types := []string{}
	for _, x := range e.rec.since(mark) {
		types = append(types, x.responseType)
		// (upstream names no as=/g=/v= in the Content-Type of a transformed object: protobuf, as here)
		if !strings.HasPrefix(x.responseType, protobuf) {
			fail("the metadata client's %s %s [accept %q] answered %q (protobuf PartialObjectMetadata expected)", x.method, x.url, x.accept, x.responseType)
		}
	}

	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, e.ns, nil)
	informer := factory.ForResource(gvr).Informer()
	ev := newEvents()
	seen := make(chan string, 100)
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok && strings.HasPrefix(m.Name, "cg-meta-") {
				seen <- "add " + m.Name
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok && strings.HasPrefix(m.Name, "cg-meta-") {
				seen <- "delete " + m.Name
			}
		},
	})
	check(err, "add handler")
	_ = ev
	ctx, cancel := context.WithCancel(e.ctx)
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			fail("the metadata informer for %v did not sync", typ)
		}
	}
	expect := func(want string) {
		select {
		case got := <-seen:
			if got != want {
				fail("metadata informer: %q, want %q", got, want)
			}
		case <-time.After(20 * time.Second):
			fail("metadata informer: %q not seen", want)
		}
	}
	expect("add cg-meta-a")
	_, err = cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-meta-b"}}, metav1.CreateOptions{})
	check(err, "create")
	expect("add cg-meta-b")
	check(cms.Delete(e.ctx, "cg-meta-a", metav1.DeleteOptions{}), "delete")
	expect("delete cg-meta-a")
	e.out(step, "PartialObjectMetadata get/list as %s; metadata informer synced, saw an add and a delete", strings.Join(types, ", "))
}

// stepEvents: events recorded as controllers do: core/v1 through record (a repeat becomes a PATCH of
// the count) and events.k8s.io/v1 through tools/events.
func stepEvents(e *env, step string) {
	cm, err := e.cs.CoreV1().ConfigMaps(e.ns).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-events"}}, metav1.CreateOptions{})
	check(err, "create")
	legacy := record.NewBroadcaster()
	defer legacy.Shutdown()
	legacy.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: e.cs.CoreV1().Events("")})
	recorder := legacy.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "clientgo"})
	recorder.Event(cm, corev1.EventTypeNormal, "Tested", "recorded by client-go")
	eventually(e, "the core/v1 event", func() bool {
		list, err := e.cs.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=cg-events,reason=Tested"})
		return err == nil && len(list.Items) == 1 && list.Items[0].Count == 1
	})
	recorder.Event(cm, corev1.EventTypeNormal, "Tested", "recorded by client-go")
	eventually(e, "the core/v1 event's count patched to 2", func() bool {
		list, err := e.cs.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=cg-events,reason=Tested"})
		return err == nil && len(list.Items) == 1 && list.Items[0].Count == 2
	})

	broadcaster := k8sevents.NewBroadcaster(&k8sevents.EventSinkImpl{Interface: e.cs.EventsV1()})
	ctx, cancel := context.WithCancel(e.ctx)
	defer func() { cancel(); broadcaster.Shutdown() }()
	check(broadcaster.StartRecordingToSinkWithContext(ctx), "start the events.k8s.io broadcaster")
	recorder2 := broadcaster.NewRecorder(scheme.Scheme, "clientgo.protokube.test/controller")
	recorder2.Eventf(cm, nil, corev1.EventTypeWarning, "Checked", "Check", "note %d", 1)
	eventually(e, "the events.k8s.io/v1 event", func() bool {
		list, err := e.cs.EventsV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, ev := range list.Items {
			if ev.Reason == "Checked" && ev.Regarding.Name == "cg-events" && ev.ReportingController == "clientgo.protokube.test/controller" && ev.Note == "note 1" {
				return true
			}
		}
		return false
	})
	e.out(step, "core/v1 event recorded and its count patched; events.k8s.io/v1 event recorded")
}

// stepGC: dependents with ownerReferences go when their owner is deleted in the background, stay
// (ownerReference removed) when orphaned, and a foreground delete waits for them.
func stepGC(e *env, step string) {
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	owner := func(name string) *corev1.ConfigMap {
		o, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		check(err, "create owner %s", name)
		_, err = cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name:            name + "-dep",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID, BlockOwnerDeletion: ptr.To(true)}},
		}}, metav1.CreateOptions{})
		check(err, "create dependent of %s", name)
		return o
	}
	gone := func(name string) func() bool {
		return func() bool {
			_, err := cms.Get(e.ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}
	}
	owner("cg-gc-bg")
	check(cms.Delete(e.ctx, "cg-gc-bg", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}), "background delete")
	eventually(e, "the background dependent collected", gone("cg-gc-bg-dep"))

	owner("cg-gc-orphan")
	check(cms.Delete(e.ctx, "cg-gc-orphan", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}), "orphan delete")
	eventually(e, "the orphaning owner gone", gone("cg-gc-orphan"))
	eventually(e, "the orphan's ownerReference removed", func() bool {
		dep, err := cms.Get(e.ctx, "cg-gc-orphan-dep", metav1.GetOptions{})
		return err == nil && len(dep.OwnerReferences) == 0
	})

	owner("cg-gc-fg")
	check(cms.Delete(e.ctx, "cg-gc-fg", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}), "foreground delete")
	eventually(e, "the foreground dependent collected", gone("cg-gc-fg-dep"))
	eventually(e, "the foreground owner gone", gone("cg-gc-fg"))
	e.out(step, "background: dependent collected; orphan: dependent kept, ownerReference removed; foreground: dependent then owner")
}

// stepReads: reads only (for a content type the server may accept in answers but not in bodies):
// a get, a list and a watch's first event, decoded by client-go's codec.
func stepReads(e *env, step string) {
	ns, err := e.cs.CoreV1().Namespaces().Get(e.ctx, "default", metav1.GetOptions{})
	check(err, "get the default namespace")
	if ns.Status.Phase != corev1.NamespaceActive || ns.UID == "" || ns.CreationTimestamp.IsZero() {
		fail("the default namespace: %+v", ns)
	}
	svc, err := e.cs.CoreV1().Services("default").Get(e.ctx, "kubernetes", metav1.GetOptions{})
	check(err, "get the kubernetes service")
	if svc.Spec.ClusterIP == "" || len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].TargetPort.IntValue() == 0 {
		fail("the kubernetes service: %+v", svc.Spec)
	}
	list, err := e.cs.CoreV1().Namespaces().List(e.ctx, metav1.ListOptions{})
	check(err, "list namespaces")
	if len(list.Items) < 3 || list.ResourceVersion == "" {
		fail("the namespace list: %d items at %q", len(list.Items), list.ResourceVersion)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	w, err := e.cs.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=default"})
	check(err, "watch namespaces")
	defer w.Stop()
	select {
	case event := <-w.ResultChan():
		if got, ok := event.Object.(*corev1.Namespace); !ok || event.Type != "ADDED" || got.Name != "default" {
			fail("the watch's first event: %s %T", event.Type, event.Object)
		}
	case <-ctx.Done():
		fail("no watch event")
	}
	types := map[string]bool{}
	for _, x := range e.rec.since(0) {
		types[x.responseType] = true
	}
	e.out(step, "get, list and a watch event decoded (answers: %v)", types)
}
