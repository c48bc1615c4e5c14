name   = "service"
prefix = "corp"
suffix = "dev"
