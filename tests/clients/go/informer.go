package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// events collects what informers' handlers saw, as "add ConfigMap/name" lines; resyncs (an update
// with the same resourceVersion) are counted apart.
type events struct {
	ch      chan string
	mu      sync.Mutex
	resyncs map[string]int
}

func newEvents() *events { return &events{ch: make(chan string, 1000), resyncs: map[string]int{}} }

func key(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return "tombstone " + key(t.Obj)
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap/" + o.Name
	case *corev1.Pod:
		return "Pod/" + o.Name
	}
	return fmt.Sprintf("%T", obj)
}

// handler records the events of the program's objects (named cg-...; the namespace also holds what
// controllers make, e.g. the root CA configmap).
func (ev *events) handler() cache.ResourceEventHandler {
	return cache.FilteringResourceEventHandler{FilterFunc: ours, Handler: ev.funcs()}
}

func ours(obj any) bool {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(metav1.Object)
	return ok && strings.HasPrefix(o.GetName(), "cg-")
}

func (ev *events) funcs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { ev.ch <- "add " + key(obj) },
		UpdateFunc: func(old, obj any) {
			if old.(metav1.Object).GetResourceVersion() == obj.(metav1.Object).GetResourceVersion() {
				ev.mu.Lock()
				ev.resyncs[key(obj)]++
				ev.mu.Unlock()
				return
			}
			ev.ch <- "update " + key(obj)
		},
		DeleteFunc: func(obj any) { ev.ch <- "delete " + key(obj) },
	}
}

// expect the next events to be want (in this order, or in any order when unordered).
func (ev *events) expect(unordered bool, want ...string) {
	pending := append([]string(nil), want...)
	timeout := time.After(20 * time.Second)
	for len(pending) > 0 {
		select {
		case got := <-ev.ch:
			i := -1
			for j, w := range pending {
				if w == got {
					i = j
					break
				}
			}
			if i < 0 || (!unordered && i != 0) {
				fail("informer event %q, expected %q", got, pending)
			}
			pending = append(pending[:i], pending[i+1:]...)
		case <-timeout:
			fail("informer events %q not seen within 20s", pending)
		}
	}
}

// quiet: no other event within a while.
func (ev *events) quiet(d time.Duration) {
	select {
	case got := <-ev.ch:
		fail("unexpected informer event %q", got)
	case <-time.After(d):
	}
}

// stepInformer: a SharedInformerFactory for pods and configmaps must see a scripted sequence in order,
// keep its listers current and resync.
func stepInformer(e *env, step string) {
	cms, pods := e.cs.CoreV1().ConfigMaps(e.ns), e.cs.CoreV1().Pods(e.ns)
	for i := 0; i < 3; i++ {
		_, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cg-inf-pre-%d", i)}}, metav1.CreateOptions{})
		check(err, "create configmap before the informers start")
	}
	mark := e.rec.mark()
	factory := informers.NewSharedInformerFactoryWithOptions(e.cs, 2*time.Second, informers.WithNamespace(e.ns))
	cmInformer, podInformer := factory.Core().V1().ConfigMaps(), factory.Core().V1().Pods()
	ev := newEvents()
	_, err := cmInformer.Informer().AddEventHandler(ev.handler())
	check(err, "add a configmap handler")
	_, err = podInformer.Informer().AddEventHandler(ev.handler())
	check(err, "add a pod handler")
	ctx, cancel := context.WithCancel(e.ctx)
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			fail("the %v informer did not sync", typ)
		}
	}
	ev.expect(true, "add ConfigMap/cg-inf-pre-0", "add ConfigMap/cg-inf-pre-1", "add ConfigMap/cg-inf-pre-2")
	initial := describeInitialRequests(e.rec.since(mark))

	// The scripted sequence: each event seen before the next write.
	cm, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-inf-a"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
	check(err, "create")
	ev.expect(false, "add ConfigMap/cg-inf-a")
	for i := 1; i <= 3; i++ {
		cm.Data["n"] = fmt.Sprint(i)
		cm, err = cms.Update(e.ctx, cm, metav1.UpdateOptions{})
		check(err, "update %d", i)
		ev.expect(false, "update ConfigMap/cg-inf-a")
	}
	cached, err := cmInformer.Lister().ConfigMaps(e.ns).Get("cg-inf-a")
	check(err, "lister get")
	if cached.Data["n"] != "3" || cached.ResourceVersion != cm.ResourceVersion {
		fail("the lister has %v at %s, the server %v at %s", cached.Data, cached.ResourceVersion, cm.Data, cm.ResourceVersion)
	}
	_, err = pods.Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cg-inf-pod"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			TerminationGracePeriodSeconds: ptr.To(int64(0))},
	}, metav1.CreateOptions{})
	check(err, "create pod")
	ev.expect(false, "add Pod/cg-inf-pod")
	_, err = pods.Patch(e.ctx, "cg-inf-pod", types.MergePatchType, []byte(`{"metadata":{"labels":{"seen":"yes"}}}`), metav1.PatchOptions{})
	check(err, "patch pod")
	ev.expect(false, "update Pod/cg-inf-pod")
	check(cms.Delete(e.ctx, "cg-inf-a", metav1.DeleteOptions{}), "delete configmap")
	ev.expect(false, "delete ConfigMap/cg-inf-a")
	check(pods.Delete(e.ctx, "cg-inf-pod", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}), "delete pod")
	// A pod deleted with grace 0 that no kubelet runs goes at once (possibly after an update).
	for {
		select {
		case got := <-ev.ch:
			if got == "delete Pod/cg-inf-pod" {
				goto deleted
			}
			if got != "update Pod/cg-inf-pod" {
				fail("informer event %q, expected the pod's delete", got)
			}
		case <-time.After(20 * time.Second):
			fail("the pod's delete not seen within 20s")
		}
	}
deleted:
	if _, err := cmInformer.Lister().ConfigMaps(e.ns).Get("cg-inf-a"); !apierrors.IsNotFound(err) {
		fail("the lister still has the deleted configmap: %v", err)
	}
	// Resync: each cached object handed to the handler again within a few periods.
	eventually(e, "a resync of the configmaps", func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		return ev.resyncs["ConfigMap/cg-inf-pre-0"] > 0
	})
	ev.quiet(500 * time.Millisecond)
	e.out(step, "cache synced (%s); add/update x3/delete of a configmap, add/update/delete of a pod seen in order; lister current; resync", initial)
	if classic := os.Getenv("KUBE_FEATURE_WatchListClient") == "false"; classic && strings.Contains(initial, "WatchList") {
		fail("WatchListClient is off, yet the informers used WatchList: %s", initial)
	} else if !classic && !strings.Contains(initial, "WatchList") {
		fail("the informers did not use WatchList (sendInitialEvents), which client-go does by default and the server serves: %s", initial)
	}
}

// describeInitialRequests says how the informers got their initial state: WatchList (a watch with
// sendInitialEvents=true) or list+watch.
func describeInitialRequests(xs []exchange) string {
	var parts []string
	for _, x := range xs {
		u, err := url.Parse(x.url)
		if err != nil || x.method != "GET" {
			continue
		}
		resource := u.Path[strings.LastIndex(u.Path, "/")+1:]
		q := u.Query()
		switch {
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
			parts = append(parts, fmt.Sprintf("%s by WatchList [%s]", resource, x.responseType))
		case q.Get("watch") == "true":
			parts = append(parts, fmt.Sprintf("%s watch from %s [%s]", resource, q.Get("resourceVersion"), x.responseType))
		default:
			parts = append(parts, fmt.Sprintf("%s list (%s) [%s]", resource, x.status, x.responseType))
		}
	}
	return strings.Join(parts, ", ")
}

// stepWatchList: a watch with sendInitialEvents and bookmarks (a streaming list): the objects as
// ADDED, a bookmark annotated k8s.io/initial-events-end, then changes.
func stepWatchList(e *env, step string) {
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	for i := 0; i < 3; i++ {
		_, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cg-wl-%d", i), Labels: map[string]string{"wl": "yes"}}}, metav1.CreateOptions{})
		check(err, "create")
	}
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	w, err := cms.Watch(ctx, metav1.ListOptions{
		LabelSelector: "wl=yes", SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	})
	if apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) {
		fmt.Printf("NOTE %s: the server does not serve WatchList (%v): step skipped\n", step, describe(err))
		e.out(step, "skipped")
		return
	}
	check(err, "watch with sendInitialEvents")
	defer w.Stop()
	next := func() watch.Event {
		select {
		case event, ok := <-w.ResultChan():
			if !ok {
				fail("the watch ended")
			}
			if event.Type == watch.Error {
				fail("an ERROR event: %v", apierrors.FromObject(event.Object))
			}
			return event
		case <-ctx.Done():
			fail("no event within 30s")
		}
		return watch.Event{}
	}
	seen := map[string]bool{}
	var bookmark *corev1.ConfigMap
	for bookmark == nil {
		event := next()
		switch event.Type {
		case watch.Added:
			seen[event.Object.(*corev1.ConfigMap).Name] = true
		case watch.Bookmark:
			cm := event.Object.(*corev1.ConfigMap)
			if cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
				continue // a progress bookmark
			}
			bookmark = cm
		default:
			fail("initial event %s", event.Type)
		}
	}
	if len(seen) != 3 || bookmark.ResourceVersion == "" {
		fail("initial events for %v, bookmark at %q", seen, bookmark.ResourceVersion)
	}
	_, err = cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-wl-new", Labels: map[string]string{"wl": "yes"}}}, metav1.CreateOptions{})
	check(err, "create after the initial events")
	for {
		event := next()
		if event.Type == watch.Bookmark {
			continue
		}
		if event.Type != watch.Added || event.Object.(*corev1.ConfigMap).Name != "cg-wl-new" {
			fail("after the initial events: %s %v", event.Type, key(event.Object))
		}
		break
	}
	check(cms.Delete(e.ctx, "cg-wl-0", metav1.DeleteOptions{}), "delete")
	for {
		event := next()
		if event.Type == watch.Bookmark {
			continue
		}
		if event.Type != watch.Deleted || event.Object.(*corev1.ConfigMap).Name != "cg-wl-0" {
			fail("after a delete: %s %v", event.Type, key(event.Object))
		}
		break
	}
	e.out(step, "3 initial ADDED, the initial-events-end BOOKMARK at %s, then ADDED and DELETED", bookmark.ResourceVersion)
}

// stepRelist: a watch from a resourceVersion the server no longer has is 410 Expired (an ERROR event);
// an informer whose watch is forced to that (after a stream the server ended) relists and hands its
// handlers what changed meanwhile, deletes as tombstones.
func stepRelist(e *env, step string) {
	cms := e.cs.CoreV1().ConfigMaps(e.ns)
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			fail("a watch from resourceVersion 1: want 410 Expired, got %v", describe(err))
		}
	} else {
		select {
		case event := <-w.ResultChan():
			status := apierrors.FromObject(event.Object)
			if event.Type != watch.Error || !apierrors.IsResourceExpired(status) {
				fail("a watch from resourceVersion 1: want an ERROR event 410 Expired, got %s %v", event.Type, describe(status))
			}
		case <-ctx.Done():
			fail("a watch from resourceVersion 1: no event")
		}
		w.Stop()
	}

	_, err = cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-rl-a", Labels: map[string]string{"rl": "yes"}}}, metav1.CreateOptions{})
	check(err, "create a")
	// A list from resourceVersion 0 may be served by a watch cache that has not seen the create yet
	// (so it does upstream): the informer below must start from a list that holds cg-rl-a.
	eventually(e, "a list from resourceVersion 0 that holds cg-rl-a", func() bool {
		list, err := cms.List(e.ctx, metav1.ListOptions{LabelSelector: "rl=yes", ResourceVersion: "0"})
		return err == nil && len(list.Items) == 1
	})
	var mu sync.Mutex
	var calls []string
	forced := false
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			options.LabelSelector = "rl=yes"
			mu.Lock()
			calls = append(calls, "list rv="+options.ResourceVersion)
			mu.Unlock()
			return cms.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.LabelSelector = "rl=yes"
			mu.Lock()
			defer mu.Unlock()
			initial := options.SendInitialEvents != nil && *options.SendInitialEvents
			switch {
			case initial && !forced:
				options.TimeoutSeconds = ptr.To(int64(2)) // the server ends this stream soon
			case !initial && !forced:
				// The watch after the ended stream: changes the informer can only learn by relisting,
				// then a resourceVersion the server no longer has.
				forced = true
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cg-rl-b", Labels: map[string]string{"rl": "yes"}}}, metav1.CreateOptions{}); err != nil {
					return nil, err
				}
				if err := cms.Delete(ctx, "cg-rl-a", metav1.DeleteOptions{}); err != nil {
					return nil, err
				}
				calls = append(calls, "watch rv="+options.ResourceVersion+" forced to 1")
				options.ResourceVersion = "1"
				return cms.Watch(ctx, options)
			}
			calls = append(calls, fmt.Sprintf("watch rv=%s initial=%v", options.ResourceVersion, initial))
			return cms.Watch(ctx, options)
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	ev := newEvents()
	_, err = informer.AddEventHandler(ev.handler())
	check(err, "add handler")
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		fail("no sync")
	}
	ev.expect(false, "add ConfigMap/cg-rl-a")
	ev.expect(true, "add ConfigMap/cg-rl-b", "delete tombstone ConfigMap/cg-rl-a")
	mu.Lock()
	history := strings.Join(calls, "; ")
	mu.Unlock()
	if !forced {
		fail("the forced restart did not happen: %s", history)
	}
	if informer.GetStore().GetByKey(e.ns + "/cg-rl-a"); len(informer.GetStore().List()) != 1 {
		fail("the store has %d objects after the relist", len(informer.GetStore().List()))
	}
	e.out(step, "watch from resourceVersion 1 is 410 Expired; informer relisted after a forced 410: %s", history)
}
