from pipelines.tools.truth.run import main

main()
