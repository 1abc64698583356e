"""Where the roles run: this machine or hosts over SSH (placement, remote, agent, provision, origins)."""
