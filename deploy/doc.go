// Package deploy holds what runs cdprelay as a service: the container
// image (Dockerfile, entrypoint.sh), a front door for a fleet of relay
// nodes (nginx/), and Kubernetes manifests (k8s/, kustomization.yaml).
// Its tests check these files against the repository and run what this
// machine can run: the entrypoint, nginx -t, the manifests' references.
package deploy
