"""Language-neutral text pieces shared by engines: sentence ends, writing systems."""
