// Styles imported for their side effect: Bun bundles them beside the console's script.
declare module '*.css'
