// Package sweep runs audit sweeps on distributed batch engines: a Slurm job
// array (slurm/sweep.sh, what `make sweep-slurm` runs) and a Kubernetes
// Indexed Job (k8s/audit-job.yaml). Each array task or completion index runs
// one shard of the audit (audit -shard i/n); audit merge combines the shards
// into one audit.json and AUDIT.md. README.md explains both engines.
//
// Its test (sweep_test.go) runs a small sweep through a real one-node Slurm
// cluster on loopback (slurm/cluster.sh, what `make sweep-slurm-test` runs)
// and checks that the merged audit equals an unsharded one of the same
// seeds; without that cluster (WINDTUNNEL_SLURM unset) it skips.
package sweep
