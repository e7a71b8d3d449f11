//! Sources of machine descriptions: qemu-style specs, presets, files and sysfs trees.
