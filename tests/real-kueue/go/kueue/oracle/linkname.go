package main

import (
	"context"
	_ "unsafe" // go:linkname

	"sigs.k8s.io/kueue/pkg/util/wait"

	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/util/routine"
)

// Kueue's scheduler runs its cycle only from Start's loop; its unit tests call the
// unexported schedule (and setAdmissionRoutineWrapper) directly. The oracle does the
// same through linknames, so the cycle that runs is Kueue's own code, unmodified.

//go:linkname scheduleOnce sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).schedule
func scheduleOnce(s *scheduler.Scheduler, ctx context.Context) wait.SpeedSignal

//go:linkname setAdmissionRoutineWrapper sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).setAdmissionRoutineWrapper
func setAdmissionRoutineWrapper(s *scheduler.Scheduler, w routine.Wrapper)
