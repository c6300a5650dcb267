// Signs in as a guest (the guest's device secret and tokens kept in PlayerPrefs,
// so the same guest comes back next run) and shows who that is.
// Put it on any GameObject and set Base Url in the Inspector.
#if UNITY_5_3_OR_NEWER
using System;
using Arena.Sdk;
using UnityEngine;

public sealed class ArenaSample : MonoBehaviour
{
    [Tooltip("The arena server, e.g. https://play.example.com")]
    public string baseUrl = "http://127.0.0.1:8080";

    private ArenaClient arena;
    private string shown = "signing in...";

    private async void Start()
    {
        arena = new ArenaClient(new ArenaClientOptions { BaseUrl = baseUrl, Store = new PlayerPrefsArenaStore() });
        try
        {
            var guest = await arena.Auth.LoginAsGuestAsync();
            shown = "signed in as " + guest.User.Username + (guest.Created ? " (a new guest)" : "");
        }
        catch (ArenaApiException error)
        {
            shown = "arena said " + error.Status + " " + error.Code;
        }
        catch (ArenaNetworkException error)
        {
            shown = "no answer: " + error.Message;
        }
    }

    private void OnGUI()
    {
        GUILayout.Label(shown);
    }

    private void OnDestroy()
    {
        if (arena != null) arena.Dispose();
    }
}
#endif
