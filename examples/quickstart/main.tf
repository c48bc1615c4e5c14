# A first fleetform configuration: a few simulated cloud objects and null
# resources wired together. Run it with:
#   fleetform -chdir=examples/quickstart apply -auto-approve
# and through a fleet as README.md's "Running it distributed" says.

terraform {
  required_providers {
    null = {
      source = "hashicorp/null"
    }
    sim = {
      source = "fleetform/sim"
    }
  }
}

variable "servers" {
  type        = number
  default     = 3
  description = "How many simulated servers to create."
}

variable "env" {
  type    = string
  default = "dev"
}

locals {
  prefix = "quickstart-${var.env}"
}

variable "sim_store" {
  type        = string
  default     = ".fleetform/sim-store"
  description = "Where the simulated cloud keeps its objects. A relative path is taken from the provider's working directory: this configuration's in embedded mode, each worker's in a fleet, so give a fleet an absolute path."
}

provider "sim" {
  # Objects are stored under this directory; count the files to see what exists.
  store_dir = var.sim_store
}

resource "sim_object" "network" {
  name = "${local.prefix}-network"
  tags = {
    env = var.env
  }
}

resource "sim_object" "server" {
  count = var.servers
  name  = "${local.prefix}-server-${count.index}"
  size  = 2
  tags = {
    env     = var.env
    network = sim_object.network.id
  }
}

resource "null_resource" "inventory" {
  triggers = {
    servers = join(",", sim_object.server[*].id)
  }
  depends_on = [sim_object.network]
}

output "server_ids" {
  value = sim_object.server[*].id
}

output "network_id" {
  value = sim_object.network.id
}
