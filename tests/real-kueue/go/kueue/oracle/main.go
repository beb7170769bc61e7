// Command oracle runs Kueue's own scheduler (sigs.k8s.io/kueue, the version go.mod pins)
// as a library on a cluster file and prints the first scheduling cycle's decisions in the
// shape of `gangplank plan -o json`:
//
//	{"kueueVersion": "v0.17.0",
//	 "cycles": [{"admitted":  [{"workload": "ns/name", "clusterQueue": "cq", "flavors": {"ps": {"cpu": "f"}}, "counts": {"ps": 3}}],
//	             "preempted": [{"workload": "ns/name", "by": "ns/name", "clusterQueue": "cq"}]}]}
//
// The cache, queue manager and fake client are built the way Kueue's scheduler unit tests
// build them (pkg/scheduler/scheduler_test.go, TestSchedule), with the options
// cmd/kueue/main.go derives from Kueue's Configuration.
//
// Usage:
//
//	oracle --version
//	oracle plan [--fair-sharing] [--kueue-config FILE] FILE     one cluster, JSON on stdout
//	oracle run DIR                                              every DIR/*.json|yaml → DIR/*.oracle.json
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"

	configapiv1beta1 "sigs.k8s.io/kueue/apis/config/v1beta1"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption/fairsharing"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	"sigs.k8s.io/kueue/pkg/workload"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

const kueueModule = "sigs.k8s.io/kueue"

func kueueVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == kueueModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "--version", "version":
		fmt.Printf("oracle: Kueue %s (%s)\n", kueueVersion(), kueueModule)
	case "plan":
		fs := flag.NewFlagSet("plan", flag.ExitOnError)
		fair := fs.Bool("fair-sharing", false, "force fair sharing on (default strategies)")
		cfgFile := fs.String("kueue-config", "", "Kueue Configuration document or kueue-manager-config ConfigMap")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		out, err := planFile(fs.Arg(0), *cfgFile, *fair)
		if err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %s: %v\n", fs.Arg(0), err)
			os.Exit(1)
		}
		os.Stdout.Write(out)
	case "run":
		if len(os.Args) != 3 {
			usage()
		}
		if err := runDir(os.Args[2]); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
			os.Exit(1)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: oracle --version | oracle plan [--fair-sharing] [--kueue-config FILE] FILE | oracle run DIR")
	os.Exit(2)
}

// runDir plans every cluster file of DIR (not *.oracle.json, *.gangplank.json) and writes
// NAME.oracle.json next to it; a file that fails gets {"error": "..."}.
func runDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.Contains(name, ".oracle.") || strings.Contains(name, ".gangplank.") {
			continue
		}
		if !strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
			continue
		}
		path := filepath.Join(dir, name)
		out, err := planFile(path, "", false)
		if err != nil {
			out, _ = json.Marshal(map[string]string{"error": err.Error()})
		}
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		if err := os.WriteFile(filepath.Join(dir, stem+".oracle.json"), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cluster is what a file holds, converted to Kueue's storage version (v1beta2).
type cluster struct {
	flavors         []*kueue.ResourceFlavor
	cohorts         []*kueue.Cohort
	clusterQueues   []*kueue.ClusterQueue
	localQueues     []kueue.LocalQueue
	workloads       []kueue.Workload
	others          []client.Object // namespaces, priority classes, workload priority classes
	configDocuments [][]byte
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(schedulingv1.AddToScheme(s))
	utilruntime.Must(kueue.AddToScheme(s))
	utilruntime.Must(kueuev1beta1.AddToScheme(s))
	utilruntime.Must(configapiv1beta1.AddToScheme(s))
	utilruntime.Must(configapi.AddToScheme(s))
	return s
}()

type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

func readCluster(path string) (*cluster, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &cluster{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if len(doc) == 0 || string(doc) == "null" {
			continue
		}
		if err := c.add(doc); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func decode[T any](doc []byte) (*T, error) {
	var obj T
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	return &obj, nil
}

func (c *cluster) add(doc []byte) error {
	var tm typeMeta
	if err := json.Unmarshal(doc, &tm); err != nil {
		return err
	}
	if tm.Kind == "List" || strings.HasSuffix(tm.Kind, "List") && tm.Items != nil {
		for _, it := range tm.Items {
			if err := c.add(it); err != nil {
				return err
			}
		}
		return nil
	}
	group, version, _ := strings.Cut(tm.APIVersion, "/")
	if version == "" {
		group, version = "", group
	}
	where := fmt.Sprintf("%s %s", tm.Kind, tm.Metadata.Name)
	wrap := func(err error) error { return fmt.Errorf("%s: %w", where, err) }
	switch group {
	case "kueue.x-k8s.io":
		if version != "v1beta1" && version != "v1beta2" {
			return wrap(fmt.Errorf("unsupported apiVersion %s", tm.APIVersion))
		}
		v1 := version == "v1beta1"
		switch tm.Kind {
		case "ResourceFlavor": // same schema in both versions
			o, err := decode[kueue.ResourceFlavor](doc)
			if err != nil {
				return wrap(err)
			}
			c.flavors = append(c.flavors, o)
		case "WorkloadPriorityClass":
			o, err := decode[kueue.WorkloadPriorityClass](doc)
			if err != nil {
				return wrap(err)
			}
			c.others = append(c.others, o)
		case "Cohort":
			o := &kueue.Cohort{}
			if v1 {
				src, err := decode[kueuev1beta1.Cohort](doc)
				if err != nil {
					return wrap(err)
				}
				if err := src.ConvertTo(o); err != nil {
					return wrap(err)
				}
			} else if err := json.Unmarshal(doc, o); err != nil {
				return wrap(err)
			}
			c.cohorts = append(c.cohorts, o)
		case "ClusterQueue":
			o := &kueue.ClusterQueue{}
			if v1 {
				src, err := decode[kueuev1beta1.ClusterQueue](doc)
				if err != nil {
					return wrap(err)
				}
				if err := src.ConvertTo(o); err != nil {
					return wrap(err)
				}
			} else if err := json.Unmarshal(doc, o); err != nil {
				return wrap(err)
			}
			defaultClusterQueue(o)
			c.clusterQueues = append(c.clusterQueues, o)
		case "LocalQueue":
			o := &kueue.LocalQueue{}
			if v1 {
				src, err := decode[kueuev1beta1.LocalQueue](doc)
				if err != nil {
					return wrap(err)
				}
				if err := src.ConvertTo(o); err != nil {
					return wrap(err)
				}
			} else if err := json.Unmarshal(doc, o); err != nil {
				return wrap(err)
			}
			c.localQueues = append(c.localQueues, *o)
		case "Workload":
			o := &kueue.Workload{}
			if v1 {
				src, err := decode[kueuev1beta1.Workload](doc)
				if err != nil {
					return wrap(err)
				}
				if err := src.ConvertTo(o); err != nil {
					return wrap(err)
				}
			} else if err := json.Unmarshal(doc, o); err != nil {
				return wrap(err)
			}
			if o.UID == "" {
				o.UID = types.UID(o.Namespace + "/" + o.Name)
			}
			c.workloads = append(c.workloads, *o)
		default:
			// AdmissionChecks, Topologies, ...: not modelled by the oracle.
		}
	case "scheduling.k8s.io":
		if tm.Kind == "PriorityClass" {
			o, err := decode[schedulingv1.PriorityClass](doc)
			if err != nil {
				return wrap(err)
			}
			c.others = append(c.others, o)
		}
	case "":
		switch tm.Kind {
		case "Namespace":
			o, err := decode[corev1.Namespace](doc)
			if err != nil {
				return wrap(err)
			}
			c.others = append(c.others, o)
		case "ConfigMap":
			if tm.Metadata.Name == "kueue-manager-config" && tm.Metadata.Namespace == "kueue-system" {
				if d, ok := tm.Data["controller_manager_config.yaml"]; ok {
					c.configDocuments = append(c.configDocuments, []byte(d))
				}
			}
		}
	case "config.kueue.x-k8s.io":
		if tm.Kind == "Configuration" {
			c.configDocuments = append(c.configDocuments, doc)
		}
	}
	return nil
}

// defaultClusterQueue applies the defaults the ClusterQueue CRD schema sets (the fake
// client has no API server to apply them).
func defaultClusterQueue(cq *kueue.ClusterQueue) {
	if cq.Spec.QueueingStrategy == "" {
		cq.Spec.QueueingStrategy = kueue.BestEffortFIFO
	}
	if cq.Spec.StopPolicy == nil {
		p := kueue.None
		cq.Spec.StopPolicy = &p
	}
	if cq.Spec.FlavorFungibility == nil {
		cq.Spec.FlavorFungibility = &kueue.FlavorFungibility{}
	}
	if cq.Spec.FlavorFungibility.WhenCanBorrow == "" {
		cq.Spec.FlavorFungibility.WhenCanBorrow = kueue.MayStopSearch
	}
	if cq.Spec.FlavorFungibility.WhenCanPreempt == "" {
		cq.Spec.FlavorFungibility.WhenCanPreempt = kueue.TryNextFlavor
	}
	if cq.Spec.Preemption == nil {
		cq.Spec.Preemption = &kueue.ClusterQueuePreemption{}
	}
	p := cq.Spec.Preemption
	if p.WithinClusterQueue == "" {
		p.WithinClusterQueue = kueue.PreemptionPolicyNever
	}
	if p.ReclaimWithinCohort == "" {
		p.ReclaimWithinCohort = kueue.PreemptionPolicyNever
	}
	if p.BorrowWithinCohort == nil {
		p.BorrowWithinCohort = &kueue.BorrowWithinCohort{}
	}
	if p.BorrowWithinCohort.Policy == "" {
		p.BorrowWithinCohort.Policy = kueue.BorrowWithinCohortPolicyNever
	}
}

// loadConfig reads Kueue's Configuration the way pkg/config.Load does (any version,
// converted and defaulted), without its validation of integrations (the oracle registers
// no job frameworks).
func loadConfig(doc []byte) (configapi.Configuration, error) {
	cfg := configapi.Configuration{}
	if doc == nil {
		scheme.Default(&cfg)
		return cfg, nil
	}
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	err := runtime.DecodeInto(codecs.UniversalDecoder(), doc, &cfg)
	return cfg, err
}

type admittedRow struct {
	Workload     string                       `json:"workload"`
	ClusterQueue string                       `json:"clusterQueue"`
	Flavors      map[string]map[string]string `json:"flavors"`
	Counts       map[string]int32             `json:"counts"`
}

type preemptedRow struct {
	Workload     string `json:"workload"`
	By           string `json:"by"`
	ClusterQueue string `json:"clusterQueue"`
}

type pendingRow struct {
	Workload string `json:"workload"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

type cycleOut struct {
	Admitted  []admittedRow  `json:"admitted"`
	Preempted []preemptedRow `json:"preempted"`
	// Pending: the QuotaReserved=False condition Kueue wrote on the heads it did not
	// admit (for reading disagreements; not compared).
	Pending []pendingRow `json:"pending"`
}

type planOut struct {
	KueueVersion string     `json:"kueueVersion"`
	FairSharing  bool       `json:"fairSharing"`
	Cycles       []cycleOut `json:"cycles"`
}

var preemptedWorkloadRe = regexp.MustCompile(`^Preempted workload (\S+) \(UID: [^)]*\) in ClusterQueue (\S+);`)

func planFile(path, cfgFile string, forceFair bool) (out []byte, err error) {
	// Kueue itself may panic on a cluster (a bug of that version): report it as this
	// file's error and go on with the next one.
	defer func() {
		if r := recover(); r != nil {
			if os.Getenv("ORACLE_DEBUG") != "" {
				debug.PrintStack()
			}
			out, err = nil, fmt.Errorf("kueue panicked: %v", r)
		}
	}()
	c, err := readCluster(path)
	if err != nil {
		return nil, err
	}
	if cfgFile != "" {
		cc, err := readCluster(cfgFile)
		if err != nil {
			return nil, err
		}
		if len(cc.configDocuments) == 0 {
			raw, err := os.ReadFile(cfgFile)
			if err != nil {
				return nil, err
			}
			cc.configDocuments = [][]byte{raw}
		}
		c.configDocuments = cc.configDocuments
	}
	var doc []byte
	if n := len(c.configDocuments); n > 0 {
		doc = c.configDocuments[n-1]
	}
	cfg, err := loadConfig(doc)
	if err != nil {
		return nil, fmt.Errorf("kueue configuration: %w", err)
	}
	if forceFair && !fairsharing.Enabled(cfg.FairSharing) {
		cfg.FairSharing = &configapi.FairSharing{}
	}
	restore, err := setFeatureGates(cfg.FeatureGates)
	if err != nil {
		return nil, err
	}
	defer restore()
	plan, err := schedule(c, &cfg)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(plan, "", " ")
}

func setFeatureGates(gates map[string]bool) (func(), error) {
	if len(gates) == 0 {
		return func() {}, nil
	}
	prev := map[string]bool{}
	for name := range gates {
		prev[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, err
	}
	return func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(prev) }, nil
}

// syncWrapper runs the scheduler's admission patches inline, so that every write of the
// cycle is done when schedule returns.
type syncWrapper struct{}

func (syncWrapper) Run(f func()) { f() }

func schedule(c *cluster, cfg *configapi.Configuration) (*planOut, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = log.IntoContext(ctx, log.Log)
	logger := log.FromContext(ctx)

	// The clock: one minute after the newest timestamp in the file.
	now := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range c.workloads {
		w := &c.workloads[i]
		if t := w.CreationTimestamp.Time; t.After(now) {
			now = t
		}
		for _, cond := range w.Status.Conditions {
			if t := cond.LastTransitionTime.Time; t.After(now) {
				now = t
			}
		}
	}
	fakeClock := testingclock.NewFakeClock(now.Add(time.Minute))

	objects := append([]client.Object{}, c.others...)
	nsSeen := map[string]bool{}
	for _, o := range c.others {
		if ns, ok := o.(*corev1.Namespace); ok {
			nsSeen[ns.Name] = true
		}
	}
	// Namespaces the input names without a Namespace object: gangplank treats them as
	// existing with only the kubernetes.io/metadata.name label; so does the oracle.
	addNs := func(name string) {
		if name != "" && !nsSeen[name] {
			nsSeen[name] = true
			objects = append(objects, &corev1.Namespace{})
			ns := objects[len(objects)-1].(*corev1.Namespace)
			ns.Name = name
		}
	}
	for i := range c.localQueues {
		addNs(c.localQueues[i].Namespace)
	}
	for i := range c.workloads {
		addNs(c.workloads[i].Namespace)
	}
	for _, o := range objects {
		if ns, ok := o.(*corev1.Namespace); ok {
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels[corev1.LabelMetadataName] = ns.Name
		}
	}

	cl := utiltesting.NewClientBuilder().
		WithLists(&kueue.WorkloadList{Items: c.workloads}, &kueue.LocalQueueList{Items: c.localQueues}).
		WithObjects(objects...).
		WithStatusSubresource(&kueue.Workload{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: utiltesting.TreatSSAAsStrategicMerge}).
		Build()
	recorder := &utiltesting.EventRecorder{}

	// Options as cmd/kueue/main.go derives them from the Configuration.
	var cacheOptions []schdcache.Option
	var queueOptions []qcache.Option
	if cfg.Resources != nil && len(cfg.Resources.ExcludeResourcePrefixes) > 0 {
		cacheOptions = append(cacheOptions, schdcache.WithExcludedResourcePrefixes(cfg.Resources.ExcludeResourcePrefixes))
		queueOptions = append(queueOptions, qcache.WithExcludedResourcePrefixes(cfg.Resources.ExcludeResourcePrefixes))
	}
	if cfg.Resources != nil && len(cfg.Resources.Transformations) > 0 {
		cacheOptions = append(cacheOptions, schdcache.WithResourceTransformations(cfg.Resources.Transformations))
		queueOptions = append(queueOptions, qcache.WithResourceTransformations(cfg.Resources.Transformations))
	}
	if cfg.FairSharing != nil {
		cacheOptions = append(cacheOptions, schdcache.WithFairSharing(fairsharing.Enabled(cfg.FairSharing)))
	}
	expectations := preemptexpectations.New()
	queueOptions = append(queueOptions, qcache.WithPreemptionExpectations(expectations))

	cqCache := schdcache.New(cl, cacheOptions...)
	qManager := qcache.NewManagerForUnitTests(cl, cqCache, queueOptions...)

	// The order of TestSchedule: local queues, flavors, cluster queues, cohorts.
	for i := range c.localQueues {
		if err := qManager.AddLocalQueue(ctx, &c.localQueues[i]); err != nil {
			return nil, fmt.Errorf("local queue %s/%s: %w", c.localQueues[i].Namespace, c.localQueues[i].Name, err)
		}
	}
	for _, rf := range c.flavors {
		cqCache.AddOrUpdateResourceFlavor(logger, rf)
	}
	for _, cq := range c.clusterQueues {
		if err := cqCache.AddClusterQueue(ctx, cq); err != nil {
			return nil, fmt.Errorf("cluster queue %s: %w", cq.Name, err)
		}
		if err := qManager.AddClusterQueue(ctx, cq); err != nil {
			return nil, fmt.Errorf("cluster queue %s: %w", cq.Name, err)
		}
		if err := cl.Create(ctx, cq.DeepCopy()); err != nil {
			return nil, fmt.Errorf("cluster queue %s: %w", cq.Name, err)
		}
	}
	for _, co := range c.cohorts {
		if err := cqCache.AddOrUpdateCohort(co); err != nil {
			return nil, fmt.Errorf("cohort %s: %w", co.Name, err)
		}
		qManager.AddOrUpdateCohort(ctx, co)
	}

	out := &planOut{KueueVersion: kueueVersion(), FairSharing: fairsharing.Enabled(cfg.FairSharing)}
	cyc := cycleOut{Admitted: []admittedRow{}, Preempted: []preemptedRow{}, Pending: []pendingRow{}}

	// Heads blocks while no active ClusterQueue has a pending workload: then the cycle
	// decides nothing.
	hasHead := false
	for _, cq := range c.clusterQueues {
		if n, err := qManager.Pending(cq); err == nil && n > 0 && cqCache.ClusterQueueActive(kueue.ClusterQueueReference(cq.Name)) {
			hasHead = true
		}
	}
	if hasHead {
		before := map[string]bool{}
		for i := range c.workloads {
			if workload.HasQuotaReservation(&c.workloads[i]) {
				before[string(workload.Key(&c.workloads[i]))] = true
			}
		}
		s := scheduler.New(qManager, cqCache, cl, recorder,
			scheduler.WithFairSharing(cfg.FairSharing),
			scheduler.WithAdmissionFairSharing(cfg.AdmissionFairSharing),
			scheduler.WithClock(nil, fakeClock),
			scheduler.WithPreemptionExpectations(expectations))
		setAdmissionRoutineWrapper(s, syncWrapper{})
		scheduleOnce(s, ctx)

		var got kueue.WorkloadList
		if err := cl.List(ctx, &got); err != nil {
			return nil, err
		}
		for i := range got.Items {
			w := &got.Items[i]
			key := w.Namespace + "/" + w.Name
			if !before[key] && !workload.HasQuotaReservation(w) {
				if cond := apimeta.FindStatusCondition(w.Status.Conditions, kueue.WorkloadQuotaReserved); cond != nil {
					cyc.Pending = append(cyc.Pending, pendingRow{Workload: key, Reason: cond.Reason, Message: cond.Message})
				}
			}
			if before[key] || !workload.HasQuotaReservation(w) {
				continue
			}
			row := admittedRow{Workload: key, ClusterQueue: string(w.Status.Admission.ClusterQueue),
				Flavors: map[string]map[string]string{}, Counts: map[string]int32{}}
			for _, psa := range w.Status.Admission.PodSetAssignments {
				fl := map[string]string{}
				for r, f := range psa.Flavors {
					fl[string(r)] = string(f)
				}
				row.Flavors[string(psa.Name)] = fl
				if psa.Count != nil {
					row.Counts[string(psa.Name)] = *psa.Count
				}
			}
			cyc.Admitted = append(cyc.Admitted, row)
		}
		for _, ev := range recorder.RecordedEvents {
			if ev.Reason != "PreemptedWorkload" {
				continue
			}
			m := preemptedWorkloadRe.FindStringSubmatch(ev.Message)
			if m == nil {
				return nil, fmt.Errorf("unexpected PreemptedWorkload event message %q", ev.Message)
			}
			cyc.Preempted = append(cyc.Preempted, preemptedRow{Workload: m[1], By: ev.Key.String(), ClusterQueue: m[2]})
		}
		// Every victim carries the Preempted condition: check the events named them all.
		victims := 0
		for i := range got.Items {
			if cond := apimeta.FindStatusCondition(got.Items[i].Status.Conditions, kueue.WorkloadPreempted); cond != nil && cond.Status == "True" {
				victims++
			}
		}
		if victims != len(cyc.Preempted) {
			return nil, fmt.Errorf("%d workloads carry Preempted=True, %d PreemptedWorkload events", victims, len(cyc.Preempted))
		}
	}
	sort.Slice(cyc.Admitted, func(i, j int) bool { return cyc.Admitted[i].Workload < cyc.Admitted[j].Workload })
	sort.Slice(cyc.Pending, func(i, j int) bool { return cyc.Pending[i].Workload < cyc.Pending[j].Workload })
	sort.Slice(cyc.Preempted, func(i, j int) bool {
		if cyc.Preempted[i].Workload != cyc.Preempted[j].Workload {
			return cyc.Preempted[i].Workload < cyc.Preempted[j].Workload
		}
		return cyc.Preempted[i].By < cyc.Preempted[j].By
	})
	out.Cycles = []cycleOut{cyc}
	return out, nil
}
