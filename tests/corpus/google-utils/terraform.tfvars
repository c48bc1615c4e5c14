# Our own inputs for the module (not from its repository): a region whose
# short name needs two capture groups (south, west), and two additional
# regions that extend the lookup map.
region             = "europe-southwest1"
additional_regions = ["us-central2", "northamerica-south2"]
